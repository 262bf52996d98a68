//! What travels on the bus channel: one JSON object per message.
//!
//! ```json
//! {"v":1,"from":"<instance id>","at":1764621234567,"change":{"kind":"tools"}}
//! {"v":1,"from":"…","at":…,"change":{"kind":"updated","uri":"file:///a"}}
//! {"v":1,"from":"…","at":…,"change":{"kind":"topic","topic":"…","method":"…","params":"{…}"}}
//! {"v":1,"from":"…","at":…,"missed":true}
//! {"v":1,"from":"…","at":…,"catalog":{"rev":7,"state":{…}}}
//! ```
//!
//! `at` (milliseconds since the Unix epoch, the publisher's clock) gives the bus lag. A
//! message of an unknown version or shape is logged and skipped, never delivered.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smcp_bus::Change;

pub(crate) const VERSION: u8 = 1;

/// One message on the channel.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    pub(crate) v: u8,
    pub(crate) from: String,
    pub(crate) at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) change: Option<WireChange>,
    /// The sender could not publish some changes (its queue overflowed while Redis was
    /// away): every instance tells its listeners that changes may have been missed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) missed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) catalog: Option<CatalogRevision>,
}

/// A new revision of the shared catalog state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CatalogRevision {
    pub(crate) rev: u64,
    pub(crate) state: Value,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum WireChange {
    Tools,
    Prompts,
    Resources,
    Updated {
        uri: String,
    },
    Topic {
        topic: String,
        method: String,
        params: String,
    },
}

impl From<&Change> for WireChange {
    fn from(change: &Change) -> Self {
        match change {
            Change::ToolsListChanged => Self::Tools,
            Change::PromptsListChanged => Self::Prompts,
            Change::ResourcesListChanged => Self::Resources,
            Change::ResourceUpdated { uri } => Self::Updated {
                uri: uri.to_string(),
            },
            Change::Topic(n) => Self::Topic {
                topic: n.topic.to_string(),
                method: n.method.to_string(),
                params: n.params.to_string(),
            },
        }
    }
}

impl WireChange {
    /// The change; `None` for a topic notification whose params are not a JSON object text
    /// (a listener would otherwise write broken JSON).
    pub(crate) fn into_change(self) -> Option<Change> {
        Some(match self {
            Self::Tools => Change::ToolsListChanged,
            Self::Prompts => Change::PromptsListChanged,
            Self::Resources => Change::ResourcesListChanged,
            Self::Updated { uri } => Change::resource_updated(uri),
            Self::Topic {
                topic,
                method,
                params,
            } => {
                let object: serde_json::Map<String, Value> = serde_json::from_str(&params).ok()?;
                drop(object);
                Change::topic(topic, method, params)
            }
        })
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_change_round_trips() {
        let changes = [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::resource_updated("file:///a b"),
            Change::topic("t1", "notifications/tasks", r#"{"taskId":"t1"}"#),
        ];
        for change in changes {
            let env = Envelope {
                v: VERSION,
                from: "me".to_owned(),
                at: 1,
                change: Some(WireChange::from(&change)),
                missed: false,
                catalog: None,
            };
            let text = serde_json::to_string(&env).unwrap();
            let back: Envelope = serde_json::from_str(&text).unwrap();
            assert_eq!(back.change.unwrap().into_change(), Some(change));
        }
    }

    #[test]
    fn a_topic_whose_params_are_not_an_object_is_dropped() {
        let wire = WireChange::Topic {
            topic: "t".to_owned(),
            method: "m".to_owned(),
            params: "[1]".to_owned(),
        };
        assert_eq!(wire.into_change(), None);
    }

    #[test]
    fn the_wire_form_is_the_documented_one() {
        let env = Envelope {
            v: VERSION,
            from: "i".to_owned(),
            at: 5,
            change: Some(WireChange::Updated {
                uri: "x:/1".to_owned(),
            }),
            missed: false,
            catalog: None,
        };
        assert_eq!(
            serde_json::to_string(&env).unwrap(),
            r#"{"v":1,"from":"i","at":5,"change":{"kind":"updated","uri":"x:/1"}}"#
        );
    }
}
