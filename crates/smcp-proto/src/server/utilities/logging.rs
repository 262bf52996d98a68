//! Logging (`server/utilities/logging.mdx`, deprecated; `schema.ts`
//! `LoggingMessageNotificationParams`). A request opts in with
//! `_meta["io.modelcontextprotocol/logLevel"]`; see [`crate::basic::LoggingLevel`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::basic::LoggingLevel;
use crate::basic::Meta;

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Severity.
    pub level: LoggingLevel,
    /// Logger name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON value to log.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A log message at `level` with `data`.
    pub fn new(level: LoggingLevel, data: Value) -> Self {
        Self {
            meta: None,
            level,
            logger: None,
            data,
        }
    }
}
