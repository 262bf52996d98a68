//! The named JSON-RPC messages of `schema.ts` (`JSONRPCRequest`/`JSONRPCNotification`/
//! `JSONRPCResultResponse` subtypes) as typed envelopes, plus their method names.
//!
//! `CallToolResultResponse`, `ReadResourceResultResponse` and `GetPromptResultResponse` carry
//! [`ResultOrInputRequired`], because those three methods may answer with an
//! `InputRequiredResult`.

use crate::basic::{NotificationParams, RequestParams};
use crate::jsonrpc_typed::{
    TypedErrorResponse, TypedNotification, TypedRequest, TypedResultResponse,
};
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
}

/// `server/discover` request.
pub type DiscoverRequest = TypedRequest<RequestParams>;
/// `completion/complete` request.
pub type CompleteRequest = TypedRequest<CompleteRequestParams>;
/// `prompts/get` request.
pub type GetPromptRequest = TypedRequest<GetPromptRequestParams>;
/// `prompts/list` request.
pub type ListPromptsRequest = TypedRequest<PaginatedRequestParams>;
/// `resources/list` request.
pub type ListResourcesRequest = TypedRequest<PaginatedRequestParams>;
/// `resources/templates/list` request.
pub type ListResourceTemplatesRequest = TypedRequest<PaginatedRequestParams>;
/// `resources/read` request.
pub type ReadResourceRequest = TypedRequest<ReadResourceRequestParams>;
/// `subscriptions/listen` request.
pub type SubscriptionsListenRequest = TypedRequest<SubscriptionsListenRequestParams>;
/// `tools/call` request.
pub type CallToolRequest = TypedRequest<CallToolRequestParams>;
/// `tools/list` request.
pub type ListToolsRequest = TypedRequest<PaginatedRequestParams>;

/// `notifications/cancelled`.
pub type CancelledNotification = TypedNotification<CancelledNotificationParams>;
/// `notifications/progress`.
pub type ProgressNotification = TypedNotification<ProgressNotificationParams>;
/// `notifications/message`.
pub type LoggingMessageNotification = TypedNotification<LoggingMessageNotificationParams>;
/// `notifications/resources/updated`.
pub type ResourceUpdatedNotification = TypedNotification<ResourceUpdatedNotificationParams>;
/// `notifications/resources/list_changed` (params optional).
pub type ResourceListChangedNotification = TypedNotification<Option<NotificationParams>>;
/// `notifications/tools/list_changed` (params optional).
pub type ToolListChangedNotification = TypedNotification<Option<NotificationParams>>;
/// `notifications/prompts/list_changed` (params optional).
pub type PromptListChangedNotification = TypedNotification<Option<NotificationParams>>;
/// `notifications/subscriptions/acknowledged`.
pub type SubscriptionsAcknowledgedNotification =
    TypedNotification<SubscriptionsAcknowledgedNotificationParams>;

/// Response to `server/discover`.
pub type DiscoverResultResponse = TypedResultResponse<DiscoverResult>;
/// Response to `completion/complete`.
pub type CompleteResultResponse = TypedResultResponse<CompleteResult>;
/// Response to `prompts/get` (may be `input_required`).
pub type GetPromptResultResponse = TypedResultResponse<ResultOrInputRequired<GetPromptResult>>;
/// Response to `prompts/list`.
pub type ListPromptsResultResponse = TypedResultResponse<ListPromptsResult>;
/// Response to `resources/list`.
pub type ListResourcesResultResponse = TypedResultResponse<ListResourcesResult>;
/// Response to `resources/templates/list`.
pub type ListResourceTemplatesResultResponse = TypedResultResponse<ListResourceTemplatesResult>;
/// Response to `resources/read` (may be `input_required`).
pub type ReadResourceResultResponse =
    TypedResultResponse<ResultOrInputRequired<ReadResourceResult>>;
/// Graceful-close response to `subscriptions/listen`.
pub type SubscriptionsListenResultResponse = TypedResultResponse<SubscriptionsListenResult>;
/// Response to `tools/call` (may be `input_required`).
pub type CallToolResultResponse = TypedResultResponse<ResultOrInputRequired<CallToolResult>>;
/// Response to `tools/list`.
pub type ListToolsResultResponse = TypedResultResponse<ListToolsResult>;

/// −32020 error response.
pub type HeaderMismatchError = TypedErrorResponse;
/// −32022 error response; `error.data` is [`crate::error::UnsupportedProtocolVersionData`].
pub type UnsupportedProtocolVersionError = TypedErrorResponse;
/// −32021 error response; `error.data` is [`crate::error::MissingRequiredClientCapabilityData`].
pub type MissingRequiredClientCapabilityError = TypedErrorResponse;
