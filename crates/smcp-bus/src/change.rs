//! Change events and interest filters.

use std::sync::Arc;

/// One change, as small as the notification it becomes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Change {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource or template list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource's contents changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource that changed. Shared, so fan-out to many subscribers copies no bytes.
        uri: Arc<str>,
    },
    /// A notification an extension sends to the listeners of one topic (e.g. SEP-2663's
    /// `notifications/tasks` for one task id). A newer notification for the same topic
    /// replaces one a subscriber has not read yet: each carries the topic's whole state.
    Topic(Arc<TopicNotification>),
}

/// The payload of [`Change::Topic`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicNotification {
    /// Who receives it: subscribers whose [`Interest::topics`] contain it.
    pub topic: Box<str>,
    /// The notification method, e.g. `notifications/tasks`.
    pub method: Box<str>,
    /// The notification's `params` as a compact JSON object text (`{…}`), without `_meta`:
    /// the listen stream adds the subscription id.
    pub params: Box<str>,
}

impl Change {
    /// `ResourceUpdated` for `uri`.
    pub fn resource_updated(uri: impl Into<Arc<str>>) -> Self {
        Self::ResourceUpdated { uri: uri.into() }
    }

    /// The notification method this change becomes on the wire.
    pub fn method(&self) -> &str {
        match self {
            Self::ToolsListChanged => "notifications/tools/list_changed",
            Self::PromptsListChanged => "notifications/prompts/list_changed",
            Self::ResourcesListChanged => "notifications/resources/list_changed",
            Self::ResourceUpdated { .. } => "notifications/resources/updated",
            Self::Topic(n) => &n.method,
        }
    }

    /// A [`Change::Topic`]: `method` with `params` (a JSON object text) for the listeners of
    /// `topic`.
    pub fn topic(
        topic: impl Into<Box<str>>,
        method: impl Into<Box<str>>,
        params: impl Into<Box<str>>,
    ) -> Self {
        Self::Topic(Arc::new(TopicNotification {
            topic: topic.into(),
            method: method.into(),
            params: params.into(),
        }))
    }
}

/// Which changes a subscriber receives: the honoured part of a listen request's filter.
///
/// The bus applies it before buffering, so a subscriber is never woken, and its buffer never
/// fills, for changes it did not ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    /// Receive [`Change::ToolsListChanged`].
    pub tools_list_changed: bool,
    /// Receive [`Change::PromptsListChanged`].
    pub prompts_list_changed: bool,
    /// Receive [`Change::ResourcesListChanged`].
    pub resources_list_changed: bool,
    /// Receive [`Change::ResourceUpdated`] for these URIs and their sub-resources
    /// (see [`uri_covers`]).
    pub resource_uris: Vec<String>,
    /// Receive [`Change::Topic`] for these topics (exact match). Extensions fill it from the
    /// filter members they honour.
    pub topics: Vec<String>,
}

impl Interest {
    /// The three list-changed kinds, no resource URIs.
    pub fn all_lists() -> Self {
        Self {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_uris: Vec::new(),
            topics: Vec::new(),
        }
    }

    /// Whether nothing at all is selected.
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed
            && !self.prompts_list_changed
            && !self.resources_list_changed
            && self.resource_uris.is_empty()
            && self.topics.is_empty()
    }

    /// Whether a subscriber with this interest receives `change`.
    pub fn wants(&self, change: &Change) -> bool {
        match change {
            Change::ToolsListChanged => self.tools_list_changed,
            Change::PromptsListChanged => self.prompts_list_changed,
            Change::ResourcesListChanged => self.resources_list_changed,
            Change::ResourceUpdated { uri } => {
                self.resource_uris.iter().any(|s| uri_covers(s, uri))
            }
            Change::Topic(n) => self.topics.iter().any(|t| **t == *n.topic),
        }
    }
}

/// Whether a subscription to `subscribed` covers an update of `uri`.
///
/// The rule (the spec says only that the updated URI "may be a sub-resource"): equal URIs
/// match; otherwise `uri` must extend `subscribed` at a path-segment boundary, i.e.
/// `subscribed` ends with `/`, or the next character of `uri` is `/`. So
/// `file:///dir/` and `file:///dir` both cover `file:///dir/x` and `file:///dir/a/b`, while
/// `file:///dir` does not cover `file:///directory`. Comparison is byte-exact: no
/// percent-decoding or case folding, so a client subscribes with the URIs the server lists.
pub fn uri_covers(subscribed: &str, uri: &str) -> bool {
    match uri.strip_prefix(subscribed) {
        Some("") => true,
        Some(rest) => subscribed.ends_with('/') || rest.starts_with('/'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_resources_are_covered_at_segment_boundaries() {
        assert!(uri_covers("file:///dir", "file:///dir"));
        assert!(uri_covers("file:///dir/", "file:///dir/x"));
        assert!(uri_covers("file:///dir", "file:///dir/x"));
        assert!(uri_covers("file:///dir", "file:///dir/a/b"));
        assert!(!uri_covers("file:///dir", "file:///directory"));
        assert!(!uri_covers("file:///dir/x", "file:///dir"));
        assert!(!uri_covers("test://a", "other://a"));
    }

    #[test]
    fn interest_selects_by_kind_and_uri() {
        let i = Interest {
            prompts_list_changed: true,
            resource_uris: vec!["file:///dir/".to_owned()],
            ..Interest::default()
        };
        assert!(!i.wants(&Change::ToolsListChanged));
        assert!(i.wants(&Change::PromptsListChanged));
        assert!(i.wants(&Change::resource_updated("file:///dir/a")));
        assert!(!i.wants(&Change::resource_updated("file:///other")));
        assert!(Interest::default().is_empty());
        let t = Interest {
            topics: vec!["task-1".to_owned()],
            ..Interest::default()
        };
        assert!(!t.is_empty());
        assert!(t.wants(&Change::topic("task-1", "notifications/tasks", "{}")));
        assert!(!t.wants(&Change::topic("task-2", "notifications/tasks", "{}")));
        assert!(!i.wants(&Change::topic("task-1", "notifications/tasks", "{}")));
    }
}
