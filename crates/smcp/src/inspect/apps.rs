//! The MCP Apps host's server side (SEP-1865): a tool's `ui://` view read from the server and
//! served to the page's sandboxed frame with the view's Content-Security-Policy, and the
//! calls the view makes through the page's bridge, limited to the tools a view may call.
//!
//! The frame is sandboxed without `allow-same-origin` (the page sets it, and the view's own
//! `Content-Security-Policy` repeats it with `sandbox allow-scripts`, so the view is in an
//! opaque origin even when opened on its own): it cannot read the inspector's cookie or
//! reach its API, whose guard refuses `Origin: null`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use smcp_client::proto::ext::ui::{self, UiResourceMeta, UiToolMeta};

use super::scope;
use super::state::{ApiError, Inspector, View};

type App = State<Arc<Inspector>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Open {
    uri: String,
    #[serde(default)]
    call: Option<String>,
}

/// The view's HTML and its `_meta.ui` from a `resources/read` result.
fn html_of(
    contents: &Value,
    resource_meta: Option<&Value>,
) -> Result<(String, UiResourceMeta), String> {
    let content = contents
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| {
            c.get("mimeType")
                .and_then(Value::as_str)
                .is_some_and(|m| m.replace(' ', "").eq_ignore_ascii_case(ui::MIME_TYPE))
        })
        .ok_or_else(|| format!("the resource has no {} contents", ui::MIME_TYPE))?;
    let html = if let Some(text) = content.get("text").and_then(Value::as_str) {
        text.to_owned()
    } else {
        let blob = content.get("blob").and_then(Value::as_str).unwrap_or("");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| format!("the view's blob is not Base64: {e}"))?;
        String::from_utf8(bytes).map_err(|_| "the view's blob is not UTF-8 HTML".to_owned())?
    };
    // The contents' own `_meta.ui` wins over the listed resource's.
    let meta = [content.get("_meta"), resource_meta]
        .into_iter()
        .flatten()
        .find_map(|m| UiResourceMeta::from_meta(m.as_object()).ok().flatten())
        .unwrap_or_default();
    Ok((html, meta))
}

/// Reads a tool's view and keeps it for the frame; answers where the frame loads it from.
pub(crate) async fn open(State(app): App, Json(req): Json<Open>) -> Result<Json<Value>, ApiError> {
    if !req.uri.starts_with(ui::URI_SCHEME) {
        return Err(ApiError::bad(format!(
            "uri: an MCP App view is a {}… resource",
            ui::URI_SCHEME
        )));
    }
    let read = app.client.read_resource(&req.uri).await?;
    let read = serde_json::to_value(read).unwrap_or_default();
    let listed = app
        .client
        .list_resources()
        .await
        .ok()
        .and_then(|all| all.into_iter().find(|r| r.uri == req.uri))
        .and_then(|r| serde_json::to_value(r).ok());
    let (html, meta) = html_of(
        &read["contents"],
        listed.as_ref().and_then(|r| r.get("_meta")),
    )
    .map_err(|e| ApiError(StatusCode::BAD_GATEWAY, format!("{}: {e}", req.uri)))?;
    let id = super::guard::secret()
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let csp = format!("{}; sandbox allow-scripts", meta.content_security_policy());
    app.add_view(
        id.clone(),
        View {
            html,
            csp: csp.clone(),
        },
    );
    tracing::info!(uri = %req.uri, call = ?req.call, "MCP App view opened");
    Ok(Json(json!({
        "view": id, "src": format!("/app/{id}"), "allow": meta.allow_attribute(),
        "prefersBorder": meta.prefers_border, "csp": csp,
    })))
}

/// The view's document, with its policy.
pub(crate) async fn frame(State(app): App, Path(id): Path<String>) -> Response {
    let Some(view) = app.view(&id) else {
        return (StatusCode::NOT_FOUND, "no such view").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::CONTENT_SECURITY_POLICY, view.csp),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            (header::REFERRER_POLICY, "no-referrer".to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        ],
        view.html,
    )
        .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewCall {
    view: String,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// A `tools/call` from a view: only for tools a view may call (`visibility` with `app`, or
/// no visibility).
pub(crate) async fn call(
    State(app): App,
    Json(req): Json<ViewCall>,
) -> Result<Json<Value>, ApiError> {
    if app.view(&req.view).is_none() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "view: no such view".to_owned(),
        ));
    }
    let tool = app
        .client
        .list_tools()
        .await?
        .into_iter()
        .find(|t| t.name == req.name)
        .ok_or_else(|| ApiError::bad(format!("name: the server has no tool {:?}", req.name)))?;
    let callable = UiToolMeta::from_meta(tool.meta.as_ref())
        .ok()
        .flatten()
        .is_none_or(|m| m.app_callable());
    if !callable {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            format!(
                "name: {} is not visible to apps (its visibility leaves out \"app\")",
                req.name
            ),
        ));
    }
    let arguments = req.arguments.unwrap_or_else(|| json!({}));
    let client = app.client.clone();
    let name = req.name.clone();
    let result = scope::CALL
        .scope(
            format!("app {}", &req.view[..8.min(req.view.len())]),
            async move { client.call_tool(&name, arguments).await },
        )
        .await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewRead {
    view: String,
    uri: String,
}

/// A `resources/read` from a view.
pub(crate) async fn read(
    State(app): App,
    Json(req): Json<ViewRead>,
) -> Result<Json<Value>, ApiError> {
    if app.view(&req.view).is_none() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "view: no such view".to_owned(),
        ));
    }
    let result = app.client.read_resource(&req.uri).await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_view_is_the_mcp_app_contents_with_its_own_policy() {
        let contents = json!([
            {"uri": "ui://a", "mimeType": "text/plain", "text": "not this"},
            {"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "text": "<p>hi</p>",
             "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example"]}}}},
        ]);
        let (html, meta) = html_of(&contents, None).unwrap();
        assert_eq!(html, "<p>hi</p>");
        assert!(
            meta.content_security_policy()
                .contains("connect-src https://api.example")
        );
        let blob = json!([{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "blob": "PGI+aGk8L2I+"}]);
        assert_eq!(html_of(&blob, None).unwrap().0, "<b>hi</b>");
        let none = json!([{"uri": "ui://a", "mimeType": "text/html", "text": "x"}]);
        assert!(
            html_of(&none, None)
                .unwrap_err()
                .contains("profile=mcp-app")
        );
    }
}
