//! Cancellation (`patterns/cancellation.mdx`; `schema.ts` `CancelledNotificationParams`).
//!
//! On Streamable HTTP a request is cancelled by closing its stream; `notifications/cancelled`
//! is only used to end a `subscriptions/listen` stream (and on stdio).

use serde::{Deserialize, Serialize};

use crate::basic::Meta;
use crate::jsonrpc::id::RequestId;

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The id of the request being cancelled, with its JSON type preserved.
    pub request_id: RequestId,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
