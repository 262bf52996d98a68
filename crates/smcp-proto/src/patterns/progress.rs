//! Progress (`patterns/progress.mdx`; `schema.ts` `ProgressNotificationParams`).
//!
//! A request opts in with `_meta.progressToken`; the server may then send
//! `notifications/progress` on that request's stream, with strictly increasing `progress`.

use serde::{Deserialize, Serialize};

use crate::basic::{Meta, ProgressToken, num};

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; strictly increasing.
    #[serde(serialize_with = "num::f64")]
    pub progress: f64,
    /// Total, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub total: Option<f64>,
    /// Human-readable status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        Self {
            meta: None,
            progress_token: token,
            progress,
            total,
            message: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_type_and_numbers_are_preserved() {
        for v in [
            json!({"progressToken": 7, "progress": 1.5}),
            json!({"progressToken": "7", "progress": 2, "total": 10}),
        ] {
            let p: ProgressNotificationParams = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&p).unwrap(), v);
        }
    }
}
