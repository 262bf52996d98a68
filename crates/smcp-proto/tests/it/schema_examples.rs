//! Every example under `tests/spec/2026-07-28/examples/<TypeName>/*.json` (the specification's
//! own wire examples, copied into the repository: see `SOURCE.md` there) parses into
//! the Rust type of its folder and serializes back to the same JSON value.
//!
//! An unknown folder fails the test, so a new example cannot be skipped silently. Where an
//! example itself violates `schema.json`, the [`EXCEPTIONS`] table names the exact members our
//! serializer adds or drops, and the test asserts exactly those differences.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use smcp_proto::basic::NotificationParams;
use smcp_proto::capabilities::{ClientCapabilities, ServerCapabilities};
use smcp_proto::client::elicitation::{
    BooleanSchema, ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult, NumberSchema,
    StringSchema, TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
use smcp_proto::client::roots::{ListRootsResult, Root};
use smcp_proto::client::sampling::{
    CreateMessageRequestParams, CreateMessageResult, ModelPreferences, SamplingMessage,
};
use smcp_proto::content::{
    AudioContent, BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink, TextContent,
    TextResourceContents, ToolResultContent, ToolUseContent,
};
use smcp_proto::error::{
    self, ErrorObject, MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData,
};
use smcp_proto::jsonrpc::{ErrorResponse, Notification, Request};
use smcp_proto::messages::{self as m, method};
use smcp_proto::patterns::cancellation::CancelledNotificationParams;
use smcp_proto::patterns::mrtr::{
    CreateMessageRequest, ElicitRequest, InputRequests, InputRequiredResult, InputResponse,
    InputResponses, ListRootsRequest,
};
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::patterns::subscriptions::{
    ResourceUpdatedNotificationParams, SubscriptionsListenResult,
};
use smcp_proto::server::discover::DiscoverResult;
use smcp_proto::server::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use smcp_proto::server::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
};
use smcp_proto::server::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool};
use smcp_proto::server::utilities::completion::{CompleteRequestParams, CompleteResult};
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use smcp_proto::server::utilities::pagination::PaginatedRequestParams;

/// A member our serializer adds: (JSON pointer, value).
type Added = (&'static str, fn() -> Value);

/// An example that does not conform to `schema.json`, and how our output differs from it.
struct Exception {
    /// `<Folder>/<file>.json`.
    file: &'static str,
    /// Members our serializer adds.
    added: &'static [Added],
    /// Members our serializer drops (JSON pointers).
    dropped: &'static [&'static str],
    /// Why, citing the schema.
    why: &'static str,
}

const EXCEPTIONS: &[Exception] = &[
    Exception {
        file: "ReadResourceResultResponse/read-resource-result-response.json",
        added: &[
            ("/result/ttlMs", || json!(0)),
            ("/result/cacheScope", || json!("private")),
        ],
        dropped: &[],
        why: "schema.json ReadResourceResult (extends CacheableResult) requires `ttlMs` and \
              `cacheScope`; the example omits both (REQUIREMENTS D-S4). We read the absent \
              members as 0/private (CACHE: absent ttlMs = 0) and always write them.",
    },
    Exception {
        file: "ListRootsRequest/list-roots-request.json",
        added: &[],
        dropped: &["/id"],
        why: "schema.ts/schema.json ListRootsRequest has only `method` and `params`: input \
              requests are embedded in InputRequiredResult without `jsonrpc`/`id` \
              (REQUIREMENTS A6 item 57). The example's stray `id` is a pre-MRTR leftover; \
              we do not carry it.",
    },
];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec/2026-07-28/examples")
}

/// Parses `v` as `T` and serializes it back.
fn rt<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(v.clone())
        .map_err(|e| format!("parse as {}: {e}", std::any::type_name::<T>()))?;
    serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))
}

fn expect_method(v: &Value, want: &str) -> Result<(), String> {
    match v.get("method").and_then(Value::as_str) {
        Some(m) if m == want => Ok(()),
        other => Err(format!("method {other:?}, expected {want:?}")),
    }
}

/// A JSON-RPC request with method `want` and params `P`.
fn request<P: DeserializeOwned + Serialize>(v: &Value, want: &str) -> Result<Value, String> {
    expect_method(v, want)?;
    rt::<Request<P>>(v)
}

/// A JSON-RPC notification with method `want` and params `P`.
fn notification<P: DeserializeOwned + Serialize>(v: &Value, want: &str) -> Result<Value, String> {
    expect_method(v, want)?;
    rt::<Notification<P>>(v)
}

/// A bare error object with `code`.
fn error_object(v: &Value, code: i64) -> Result<Value, String> {
    let e: ErrorObject = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    if e.code != code {
        return Err(format!("code {}, expected {code}", e.code));
    }
    serde_json::to_value(&e).map_err(|e| e.to_string())
}

/// A full error response with `code` whose `data` parses as `D` (use `Value` for any).
fn error_response<D: DeserializeOwned>(v: &Value, code: i64) -> Result<Value, String> {
    let e: ErrorResponse = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    if e.error.code != code {
        return Err(format!("code {}, expected {code}", e.error.code));
    }
    if let Some(data) = &e.error.data {
        serde_json::from_value::<D>(data.clone()).map_err(|e| format!("error.data: {e}"))?;
    }
    serde_json::to_value(&e).map_err(|e| e.to_string())
}

/// One arm per example folder; an unknown folder is an error.
fn round_trip(folder: &str, v: &Value) -> Result<Value, String> {
    type Np = NotificationParams;
    match folder {
        // Base and content types.
        "AudioContent" => rt::<AudioContent>(v),
        "BlobResourceContents" => rt::<BlobResourceContents>(v),
        "EmbeddedResource" => rt::<EmbeddedResource>(v),
        "ImageContent" => rt::<ImageContent>(v),
        "ResourceLink" => rt::<ResourceLink>(v),
        "TextContent" => rt::<TextContent>(v),
        "TextResourceContents" => rt::<TextResourceContents>(v),
        "ToolResultContent" => rt::<ToolResultContent>(v),
        "ToolUseContent" => rt::<ToolUseContent>(v),
        "ClientCapabilities" => rt::<ClientCapabilities>(v),
        "ServerCapabilities" => rt::<ServerCapabilities>(v),
        // Elicitation schemas and results.
        "BooleanSchema" => rt::<BooleanSchema>(v),
        "NumberSchema" => rt::<NumberSchema>(v),
        "StringSchema" => rt::<StringSchema>(v),
        "TitledMultiSelectEnumSchema" => rt::<TitledMultiSelectEnumSchema>(v),
        "TitledSingleSelectEnumSchema" => rt::<TitledSingleSelectEnumSchema>(v),
        "UntitledMultiSelectEnumSchema" => rt::<UntitledMultiSelectEnumSchema>(v),
        "UntitledSingleSelectEnumSchema" => rt::<UntitledSingleSelectEnumSchema>(v),
        "ElicitRequest" => rt::<ElicitRequest>(v),
        "ElicitRequestFormParams" => rt::<ElicitRequestFormParams>(v),
        "ElicitRequestURLParams" => rt::<ElicitRequestURLParams>(v),
        "ElicitResult" => rt::<ElicitResult>(v),
        // Sampling and roots.
        "CreateMessageRequest" => rt::<CreateMessageRequest>(v),
        "CreateMessageRequestParams" => rt::<CreateMessageRequestParams>(v),
        "CreateMessageResult" => rt::<CreateMessageResult>(v),
        "ModelPreferences" => rt::<ModelPreferences>(v),
        "SamplingMessage" => rt::<SamplingMessage>(v),
        "ListRootsRequest" => rt::<ListRootsRequest>(v),
        "ListRootsResult" => rt::<ListRootsResult>(v),
        "Root" => rt::<Root>(v),
        // MRTR.
        "InputRequests" => rt::<InputRequests>(v),
        "InputRequiredResult" => rt::<InputRequiredResult>(v),
        "InputResponses" => {
            // Raw per key; each value must also read as one of the three response kinds.
            let r: InputResponses = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
            for (k, val) in &r.0 {
                serde_json::from_value::<InputResponse>(val.clone())
                    .map_err(|e| format!("inputResponses[{k}]: {e}"))?;
            }
            rt::<InputResponses>(v)
        }
        // Params and results.
        "CallToolRequestParams" => rt::<CallToolRequestParams>(v),
        "CallToolResult" => rt::<CallToolResult>(v),
        "CancelledNotificationParams" => rt::<CancelledNotificationParams>(v),
        "CompleteRequestParams" => rt::<CompleteRequestParams>(v),
        "CompleteResult" => rt::<CompleteResult>(v),
        "DiscoverResult" => rt::<DiscoverResult>(v),
        "GetPromptRequestParams" => rt::<GetPromptRequestParams>(v),
        "GetPromptResult" => rt::<GetPromptResult>(v),
        "ListPromptsResult" => rt::<ListPromptsResult>(v),
        "ListResourceTemplatesResult" => rt::<ListResourceTemplatesResult>(v),
        "ListResourcesResult" => rt::<ListResourcesResult>(v),
        "ListToolsResult" => rt::<ListToolsResult>(v),
        "LoggingMessageNotificationParams" => rt::<LoggingMessageNotificationParams>(v),
        "PaginatedRequestParams" => rt::<PaginatedRequestParams>(v),
        "ProgressNotificationParams" => rt::<ProgressNotificationParams>(v),
        "ReadResourceResult" => rt::<ReadResourceResult>(v),
        "Resource" => rt::<Resource>(v),
        "ResourceUpdatedNotificationParams" => rt::<ResourceUpdatedNotificationParams>(v),
        "SubscriptionsListenResult" => rt::<SubscriptionsListenResult>(v),
        "Tool" => rt::<Tool>(v),
        // JSON-RPC requests.
        "CallToolRequest" => request::<CallToolRequestParams>(v, method::TOOLS_CALL),
        "CompleteRequest" => request::<CompleteRequestParams>(v, method::COMPLETE),
        "DiscoverRequest" => request::<smcp_proto::basic::RequestParams>(v, method::DISCOVER),
        "GetPromptRequest" => request::<GetPromptRequestParams>(v, method::PROMPTS_GET),
        "ListPromptsRequest" => request::<PaginatedRequestParams>(v, method::PROMPTS_LIST),
        "ListResourceTemplatesRequest" => {
            request::<PaginatedRequestParams>(v, method::RESOURCES_TEMPLATES_LIST)
        }
        "ListResourcesRequest" => request::<PaginatedRequestParams>(v, method::RESOURCES_LIST),
        "ListToolsRequest" => request::<PaginatedRequestParams>(v, method::TOOLS_LIST),
        "ReadResourceRequest" => {
            request::<smcp_proto::server::resources::ReadResourceRequestParams>(
                v,
                method::RESOURCES_READ,
            )
        }
        "SubscriptionsListenRequest" => request::<
            smcp_proto::patterns::subscriptions::SubscriptionsListenRequestParams,
        >(v, method::SUBSCRIPTIONS_LISTEN),
        // JSON-RPC notifications.
        "CancelledNotification" => {
            notification::<CancelledNotificationParams>(v, method::CANCELLED)
        }
        "LoggingMessageNotification" => {
            notification::<LoggingMessageNotificationParams>(v, method::MESSAGE)
        }
        "ProgressNotification" => notification::<ProgressNotificationParams>(v, method::PROGRESS),
        "PromptListChangedNotification" => notification::<Np>(v, method::PROMPTS_LIST_CHANGED),
        "ResourceListChangedNotification" => notification::<Np>(v, method::RESOURCES_LIST_CHANGED),
        "ResourceUpdatedNotification" => {
            notification::<ResourceUpdatedNotificationParams>(v, method::RESOURCES_UPDATED)
        }
        "SubscriptionsAcknowledgedNotification" => notification::<
            smcp_proto::patterns::subscriptions::SubscriptionsAcknowledgedNotificationParams,
        >(v, method::SUBSCRIPTIONS_ACKNOWLEDGED),
        "ToolListChangedNotification" => notification::<Np>(v, method::TOOLS_LIST_CHANGED),
        // JSON-RPC result responses.
        "CallToolResultResponse" => rt::<m::CallToolResultResponse>(v),
        "CompleteResultResponse" => rt::<m::CompleteResultResponse>(v),
        "DiscoverResultResponse" => rt::<m::DiscoverResultResponse>(v),
        "GetPromptResultResponse" => rt::<m::GetPromptResultResponse>(v),
        "ListPromptsResultResponse" => rt::<m::ListPromptsResultResponse>(v),
        "ListResourceTemplatesResultResponse" => rt::<m::ListResourceTemplatesResultResponse>(v),
        "ListResourcesResultResponse" => rt::<m::ListResourcesResultResponse>(v),
        "ListToolsResultResponse" => rt::<m::ListToolsResultResponse>(v),
        "ReadResourceResultResponse" => rt::<m::ReadResourceResultResponse>(v),
        "SubscriptionsListenResultResponse" => rt::<m::SubscriptionsListenResultResponse>(v),
        // Errors: bare error objects and full error responses.
        "InternalError" => error_object(v, error::INTERNAL_ERROR),
        "InvalidParamsError" => error_object(v, error::INVALID_PARAMS),
        "MethodNotFoundError" => error_object(v, error::METHOD_NOT_FOUND),
        "ParseError" => error_object(v, error::PARSE_ERROR),
        "HeaderMismatchError" => error_response::<Value>(v, error::HEADER_MISMATCH),
        "MissingRequiredClientCapabilityError" => error_response::<
            MissingRequiredClientCapabilityData,
        >(
            v, error::MISSING_REQUIRED_CLIENT_CAPABILITY
        ),
        "UnsupportedProtocolVersionError" => {
            error_response::<UnsupportedProtocolVersionData>(v, error::UNSUPPORTED_PROTOCOL_VERSION)
        }
        other => Err(format!(
            "no Rust type is mapped for example folder {other:?}: add an arm to round_trip()"
        )),
    }
}

/// Lists the differences between two values as `pointer: expected …, got …` lines.
fn diff(path: &str, want: &Value, got: &Value, out: &mut String) {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}/{k}");
                match b.get(k) {
                    Some(vb) => diff(&p, va, vb, out),
                    None => {
                        let _ = writeln!(out, "  {p}: dropped (was {va})");
                    }
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    let _ = writeln!(out, "  {path}/{k}: added {vb}");
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}/{i}"), va, vb, out);
            }
        }
        _ if want != got => {
            let _ = writeln!(
                out,
                "  {}: expected {want}, got {got}",
                if path.is_empty() { "/" } else { path }
            );
        }
        _ => {}
    }
}

/// The original example with an exception's documented differences applied.
fn apply_exception(mut v: Value, ex: &Exception) -> Value {
    for ptr in ex.dropped {
        let Some((parent, key)) = ptr.rsplit_once('/') else {
            panic!("{}: bad pointer {ptr}", ex.file)
        };
        v.pointer_mut(if parent.is_empty() { "" } else { parent })
            .and_then(Value::as_object_mut)
            .and_then(|o| o.remove(key))
            .unwrap_or_else(|| panic!("{}: exception drops missing {ptr}", ex.file));
    }
    for (ptr, value) in ex.added {
        let Some((parent, key)) = ptr.rsplit_once('/') else {
            panic!("{}: bad pointer {ptr}", ex.file)
        };
        let obj = v
            .pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("{}: exception adds under missing {parent}", ex.file));
        assert!(
            obj.insert(key.to_owned(), value()).is_none(),
            "{}: {ptr} already present",
            ex.file
        );
    }
    v
}

#[test]
fn every_schema_example_round_trips() {
    let dir = examples_dir();
    assert!(
        dir.is_dir(),
        "spec examples folder is missing: {}",
        dir.display()
    );
    let mut folders: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let (mut checked, mut failures, mut exceptions_seen) = (0, String::new(), Vec::new());
    for folder in &folders {
        let name = folder.file_name().unwrap().to_str().unwrap().to_owned();
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let rel = format!("{name}/{}", file.file_name().unwrap().to_str().unwrap());
            let original: Value = serde_json::from_slice(&std::fs::read(&file).unwrap())
                .unwrap_or_else(|e| panic!("{rel}: not JSON: {e}"));
            checked += 1;
            let got = match round_trip(&name, &original) {
                Ok(v) => v,
                Err(e) => {
                    let _ = writeln!(failures, "{rel}: {e}");
                    continue;
                }
            };
            let want = match EXCEPTIONS.iter().find(|x| x.file == rel) {
                Some(ex) => {
                    exceptions_seen.push(ex.file);
                    assert_ne!(
                        got, original,
                        "{rel}: listed as an exception ({}) but round-trips exactly",
                        ex.why
                    );
                    apply_exception(original, ex)
                }
                None => original,
            };
            if got != want {
                let mut d = String::new();
                diff("", &want, &got, &mut d);
                let _ = writeln!(failures, "{rel}: round trip differs:\n{d}");
            }
        }
    }
    assert!(failures.is_empty(), "schema examples failed:\n{failures}");
    for ex in EXCEPTIONS {
        assert!(
            exceptions_seen.contains(&ex.file),
            "stale exception: {} was not found",
            ex.file
        );
    }
    assert_eq!(
        folders.len(),
        88,
        "example folders changed: update round_trip()"
    );
    assert_eq!(checked, 129, "example files changed");
}

#[test]
fn unknown_folder_is_rejected() {
    assert!(round_trip("NoSuchType", &json!({})).is_err());
}
