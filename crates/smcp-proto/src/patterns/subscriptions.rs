//! Subscriptions (`patterns/subscriptions.mdx`; `schema.ts` `SubscriptionFilter`,
//! `SubscriptionsListenRequestParams`, `SubscriptionsAcknowledgedNotificationParams`,
//! `SubscriptionsListenResult`, `ResourceUpdatedNotificationParams`).
//!
//! `subscriptions/listen` opens a stream of change notifications. The server first acknowledges
//! the subset of the filter it honours; every notification on the stream, and the graceful-close
//! result, carries `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request's id.

use serde::{Deserialize, Serialize};

use crate::basic::{Meta, RequestMeta, ResultType};
use crate::jsonrpc::id::RequestId;

/// Which notifications a listener wants. An omitted member means "not subscribed".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// URIs for `notifications/resources/updated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Task ids for `notifications/tasks` (SEP-2663; only with the tasks extension negotiated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// What to listen for (a JSON object; an array is refused, though serde would read one).
    #[serde(deserialize_with = "crate::json::object_only")]
    pub notifications: SubscriptionFilter,
}

/// Params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Notification metadata (carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The subset of the requested filter the server will honour.
    pub notifications: SubscriptionFilter,
}

/// The graceful-close result of `subscriptions/listen` (`resultType: "complete"`, `_meta` with
/// the subscription id, which the schema requires).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Result metadata, with `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
}

impl SubscriptionsListenResult {
    /// The close result for the listen request `id`.
    pub fn closed(id: &RequestId) -> Self {
        Self {
            meta: Some(subscription_meta(id)),
            result_type: ResultType::Complete,
        }
    }

    /// The subscription id from `_meta`, with its JSON type preserved.
    pub fn subscription_id(&self) -> Option<RequestId> {
        RequestId::from_value(self.meta.as_ref()?.get(crate::meta::SUBSCRIPTION_ID)?)
    }
}

/// A `_meta` object tagging a message with a subscription id.
pub fn subscription_meta(id: &RequestId) -> Meta {
    let mut meta = Meta::new();
    meta.insert(crate::meta::SUBSCRIPTION_ID.to_owned(), id.to_value());
    meta
}

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// Notification metadata (carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The updated URI (may be a sub-resource of the subscribed one).
    pub uri: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn close_result_keeps_the_id_type() {
        for id in [RequestId::from(3), RequestId::from("listen-1")] {
            let r = SubscriptionsListenResult::closed(&id);
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(
                v["_meta"]["io.modelcontextprotocol/subscriptionId"],
                id.to_value()
            );
            let back: SubscriptionsListenResult = serde_json::from_value(v).unwrap();
            assert_eq!(back.subscription_id(), Some(id));
        }
    }

    #[test]
    fn omitted_filter_members_stay_omitted() {
        let v = json!({"toolsListChanged": true, "resourceSubscriptions": []});
        let f: SubscriptionFilter = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(f.prompts_list_changed, None);
        assert_eq!(serde_json::to_value(&f).unwrap(), v);
    }
}
