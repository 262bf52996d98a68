//! The named JSON-RPC messages of `schema.ts` (`JSONRPCRequest`/`JSONRPCNotification`/
//! `JSONRPCResultResponse` subtypes) as typed [`crate::jsonrpc`] envelopes, plus their method
//! names. `params` is an `Option` in each: absent params are `None`.
//!
//! `CallToolResultResponse`, `ReadResourceResultResponse` and `GetPromptResultResponse` carry
//! [`ResultOrInputRequired`], because those three methods may answer with an
//! `InputRequiredResult`.

use crate::basic::{NotificationParams, RequestParams};
use crate::jsonrpc::envelope::{ErrorResponse, Notification, Request, ResultResponse};
use crate::patterns::cancellation::CancelledNotificationParams;
use crate::patterns::mrtr::ResultOrInputRequired;
use crate::patterns::progress::ProgressNotificationParams;
use crate::patterns::subscriptions::{
    ResourceUpdatedNotificationParams, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
use crate::server::discover::DiscoverResult;
use crate::server::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use crate::server::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
};
use crate::server::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};
use crate::server::utilities::completion::{CompleteRequestParams, CompleteResult};
use crate::server::utilities::logging::LoggingMessageNotificationParams;
use crate::server::utilities::pagination::PaginatedRequestParams;

/// Method names.
pub mod method {
    /// `server/discover`.
    pub const DISCOVER: &str = "server/discover";
    /// `completion/complete`.
    pub const COMPLETE: &str = "completion/complete";
    /// `prompts/get`.
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `prompts/list`.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `resources/list`.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`.
    pub const RESOURCES_READ: &str = "resources/read";
    /// `subscriptions/listen`.
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `tools/call`.
    pub const TOOLS_CALL: &str = "tools/call";
    /// `tools/list`.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `notifications/cancelled`.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/progress`.
    pub const PROGRESS: &str = "notifications/progress";
    /// `notifications/message`.
    pub const MESSAGE: &str = "notifications/message";
    /// `notifications/resources/updated`.
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// `notifications/resources/list_changed`.
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/tools/list_changed`.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed`.
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `notifications/subscriptions/acknowledged`.
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
    pub use crate::patterns::mrtr::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};

    /// The requests a client sends a server, SEP-2631's included.
    pub const CLIENT_REQUESTS: [&str; 12] = [
        TOOLS_CALL,
        TOOLS_LIST,
        RESOURCES_READ,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        PROMPTS_GET,
        PROMPTS_LIST,
        COMPLETE,
        DISCOVER,
        SUBSCRIPTIONS_LISTEN,
        crate::ext::files::METHOD_AUTHORIZE_UPLOAD,
        crate::ext::files::METHOD_AUTHORIZE_DOWNLOAD,
    ];

    /// `name` as one of [`CLIENT_REQUESTS`], so that a parsed request names its method
    /// without a copy; `None` for any other method.
    pub fn client_request(name: &str) -> Option<&'static str> {
        CLIENT_REQUESTS.into_iter().find(|m| *m == name)
    }

    // The session methods of the earlier revisions (2025-11-25 and before), which 2026-07-28
    // does not define: a server that also serves those revisions answers them on a session.

    /// `initialize` (earlier revisions): starts a session and negotiates its version.
    pub const INITIALIZE: &str = "initialize";
    /// `notifications/initialized` (earlier revisions): the client is ready for the session.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// `ping` (earlier revisions).
    pub const PING: &str = "ping";
    /// `logging/setLevel` (earlier revisions): the session's log level.
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `resources/subscribe` (earlier revisions): the session's resource subscriptions.
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe` (earlier revisions).
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
}

/// `server/discover` request.
pub type DiscoverRequest = Request<RequestParams>;
/// `completion/complete` request.
pub type CompleteRequest = Request<CompleteRequestParams>;
/// `prompts/get` request.
pub type GetPromptRequest = Request<GetPromptRequestParams>;
/// `prompts/list` request.
pub type ListPromptsRequest = Request<PaginatedRequestParams>;
/// `resources/list` request.
pub type ListResourcesRequest = Request<PaginatedRequestParams>;
/// `resources/templates/list` request.
pub type ListResourceTemplatesRequest = Request<PaginatedRequestParams>;
/// `resources/read` request.
pub type ReadResourceRequest = Request<ReadResourceRequestParams>;
/// `subscriptions/listen` request.
pub type SubscriptionsListenRequest = Request<SubscriptionsListenRequestParams>;
/// `tools/call` request.
pub type CallToolRequest = Request<CallToolRequestParams>;
/// `tools/list` request.
pub type ListToolsRequest = Request<PaginatedRequestParams>;

/// `notifications/cancelled`.
pub type CancelledNotification = Notification<CancelledNotificationParams>;
/// `notifications/progress`.
pub type ProgressNotification = Notification<ProgressNotificationParams>;
/// `notifications/message`.
pub type LoggingMessageNotification = Notification<LoggingMessageNotificationParams>;
/// `notifications/resources/updated`.
pub type ResourceUpdatedNotification = Notification<ResourceUpdatedNotificationParams>;
/// `notifications/resources/list_changed` (params optional).
pub type ResourceListChangedNotification = Notification<NotificationParams>;
/// `notifications/tools/list_changed` (params optional).
pub type ToolListChangedNotification = Notification<NotificationParams>;
/// `notifications/prompts/list_changed` (params optional).
pub type PromptListChangedNotification = Notification<NotificationParams>;
/// `notifications/subscriptions/acknowledged`.
pub type SubscriptionsAcknowledgedNotification =
    Notification<SubscriptionsAcknowledgedNotificationParams>;

/// Response to `server/discover`.
pub type DiscoverResultResponse = ResultResponse<DiscoverResult>;
/// Response to `completion/complete`.
pub type CompleteResultResponse = ResultResponse<CompleteResult>;
/// Response to `prompts/get` (may be `input_required`).
pub type GetPromptResultResponse = ResultResponse<ResultOrInputRequired<GetPromptResult>>;
/// Response to `prompts/list`.
pub type ListPromptsResultResponse = ResultResponse<ListPromptsResult>;
/// Response to `resources/list`.
pub type ListResourcesResultResponse = ResultResponse<ListResourcesResult>;
/// Response to `resources/templates/list`.
pub type ListResourceTemplatesResultResponse = ResultResponse<ListResourceTemplatesResult>;
/// Response to `resources/read` (may be `input_required`).
pub type ReadResourceResultResponse = ResultResponse<ResultOrInputRequired<ReadResourceResult>>;
/// Graceful-close response to `subscriptions/listen`.
pub type SubscriptionsListenResultResponse = ResultResponse<SubscriptionsListenResult>;
/// Response to `tools/call` (may be `input_required`).
pub type CallToolResultResponse = ResultResponse<ResultOrInputRequired<CallToolResult>>;
/// Response to `tools/list`.
pub type ListToolsResultResponse = ResultResponse<ListToolsResult>;

/// −32020 error response.
pub type HeaderMismatchError = ErrorResponse;
/// −32022 error response; `error.data` is [`crate::error::UnsupportedProtocolVersionData`].
pub type UnsupportedProtocolVersionError = ErrorResponse;
/// −32021 error response; `error.data` is [`crate::error::MissingRequiredClientCapabilityData`].
pub type MissingRequiredClientCapabilityError = ErrorResponse;
