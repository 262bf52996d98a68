//! Server utilities (`server/utilities/`): caching, completion, logging, pagination.

pub mod caching;
pub mod completion;
pub mod logging;
pub mod pagination;
