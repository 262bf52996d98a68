//! Progress (`patterns/progress.mdx`; `schema.ts` `ProgressNotificationParams`).
//!
//! A request opts in with `_meta.progressToken`; the server may then send
//! `notifications/progress` on that request's stream, with strictly increasing `progress`.

use serde::{Deserialize, Serialize};

use crate::basic::{Meta, ProgressToken};
use crate::json::num;

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

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_finite_progress_survives_a_round_trip(p in any::<f64>().prop_filter("finite", |v| v.is_finite()), t in proptest::option::of(0u32..1_000_000)) {
            let params = ProgressNotificationParams::new(ProgressToken::from("t"), p, t.map(f64::from));
            // Through `Value`: serde_json's text float parser (without `float_roundtrip`) is
            // not exact, which is not what this property is about.
            let v = serde_json::to_value(&params).unwrap();
            prop_assert_eq!(v["progress"].is_i64(), p.fract() == 0.0 && p.abs() < 9_007_199_254_740_992.0);
            let back: ProgressNotificationParams = serde_json::from_value(v).unwrap();
            prop_assert_eq!(back, params);
        }
    }
}
