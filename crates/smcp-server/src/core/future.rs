//! The boxed future every handler trait of the core returns: a leaf, so the traits that use it
//! (tools, resources, prompts, completion, stores, guards) depend on it and on nothing else here.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
