//! The page's API: the server's lists, tool calls (their progress, logs, questions, task
//! status and end published on the feed), cancellation, answers, reads, prompts, uploads
//! and the listen stream.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use smcp_client::proto::basic::LoggingLevel;
use smcp_client::{CancellationToken, SubscriptionEvent};

use super::scope;
use super::state::{ApiError, Inspector};

type App = State<Arc<Inspector>>;
type Answer = Result<Json<Value>, ApiError>;

pub(crate) async fn server(State(app): App) -> Json<Value> {
    Json(app.server.clone())
}

pub(crate) async fn tools(State(app): App) -> Answer {
    Ok(Json(json!({ "tools": app.client.list_tools().await? })))
}

/// Whether the server announced the capability `name` (a list it did not announce is
/// shown empty instead of asked for and refused).
fn offers(app: &Inspector, name: &str) -> bool {
    app.server["capabilities"]
        .get(name)
        .is_some_and(|c| !c.is_null())
}

pub(crate) async fn resources(State(app): App) -> Answer {
    if !offers(&app, "resources") {
        return Ok(Json(json!({ "resources": [], "offered": false })));
    }
    Ok(Json(
        json!({ "resources": app.client.list_resources().await? }),
    ))
}

pub(crate) async fn templates(State(app): App) -> Answer {
    if !offers(&app, "resources") {
        return Ok(Json(json!({ "resourceTemplates": [], "offered": false })));
    }
    Ok(Json(
        json!({ "resourceTemplates": app.client.list_resource_templates().await? }),
    ))
}

pub(crate) async fn prompts(State(app): App) -> Answer {
    if !offers(&app, "prompts") {
        return Ok(Json(json!({ "prompts": [], "offered": false })));
    }
    Ok(Json(json!({ "prompts": app.client.list_prompts().await? })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Read {
    uri: String,
}

pub(crate) async fn read(State(app): App, Json(req): Json<Read>) -> Answer {
    let result = app.client.read_resource(&req.uri).await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Prompt {
    name: String,
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

pub(crate) async fn prompt(State(app): App, Json(req): Json<Prompt>) -> Answer {
    let result = app.client.get_prompt(&req.name, req.arguments).await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Call {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    log_level: Option<LoggingLevel>,
}

/// Starts a call and answers its id at once; the rest arrives on the feed.
pub(crate) async fn call(State(app): App, Json(req): Json<Call>) -> Answer {
    if req.name.is_empty() {
        return Err(ApiError::bad("name: a tool name is required"));
    }
    let arguments = match req.arguments {
        None | Some(Value::Null) => json!({}),
        Some(args @ Value::Object(_)) => args,
        Some(_) => return Err(ApiError::bad("arguments: must be a JSON object")),
    };
    let id = app.id("c");
    let cancel = CancellationToken::new();
    app.started(&id, cancel.clone());
    let run = {
        let app = Arc::clone(&app);
        let id = id.clone();
        async move {
            let started = std::time::Instant::now();
            let mut call = app.client.tool_call(&req.name).arguments(arguments);
            let feed = app.feed.clone();
            let call_id = id.clone();
            call = call.on_progress(move |p| {
                feed.publish(&json!({
                    "type": "progress", "call": call_id, "progress": p.progress,
                    "total": p.total, "message": p.message,
                }));
            });
            if let Some(level) = req.log_level {
                let feed = app.feed.clone();
                let call_id = id.clone();
                call = call.on_log(level, move |m| {
                    feed.publish(&json!({
                        "type": "log", "call": call_id, "level": m.level, "logger": m.logger,
                        "data": m.data,
                    }));
                });
            }
            let feed = app.feed.clone();
            let call_id = id.clone();
            let result = call
                .cancellation(cancel)
                .on_task_status(move |t| {
                    feed.publish(&json!({"type": "task", "call": call_id, "task": t}));
                })
                .send()
                .await;
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            app.finished(&id);
            app.feed.publish(&match result {
                Ok(result) => {
                    json!({"type": "result", "call": id, "result": result, "elapsedMs": elapsed})
                }
                Err(e) => json!({
                    "type": "error", "call": id, "elapsedMs": elapsed,
                    "error": {"message": e.to_string(), "code": e.jsonrpc_code(), "cancelled": e.is_cancelled()},
                }),
            });
        }
    };
    tokio::spawn(scope::CALL.scope(id.clone(), run));
    Ok(Json(json!({ "call": id })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Cancel {
    call: String,
}

pub(crate) async fn cancel(State(app): App, Json(req): Json<Cancel>) -> Answer {
    if app.cancel(&req.call) {
        Ok(Json(json!({})))
    } else {
        Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("call: no call {:?} is running", req.call),
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerReq {
    question: String,
    answer: Value,
}

pub(crate) async fn answer(State(app): App, Json(req): Json<AnswerReq>) -> Answer {
    if !req.answer.is_object() {
        return Err(ApiError::bad("answer: must be a JSON object"));
    }
    app.questions
        .answer(&req.question, req.answer)
        .map(|()| Json(json!({})))
        .map_err(|_| {
            ApiError(
                StatusCode::NOT_FOUND,
                format!("question: {:?} is not waiting for an answer", req.question),
            )
        })
}

/// `?tool=NAME&field=FIELD&name=FILENAME`, percent-decoded.
fn upload_query(raw: Option<&str>) -> Result<(String, String, String), ApiError> {
    let mut tool = None;
    let mut field = None;
    let mut name = None;
    for pair in raw.unwrap_or("").split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_encoding::percent_decode_str(&v.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned();
        match k {
            "tool" => tool = Some(v),
            "field" => field = Some(v),
            "name" => name = Some(v),
            _ => {}
        }
    }
    Ok((
        tool.ok_or_else(|| ApiError::bad("tool: the query must name the tool"))?,
        field.ok_or_else(|| ApiError::bad("field: the query must name the file field"))?,
        name.unwrap_or_else(|| "upload".to_owned()),
    ))
}

/// A file name safe to create in the upload directory.
fn safe_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = base
        .chars()
        .filter(|c| c.is_alphanumeric() || "._- ".contains(*c))
        .take(100)
        .collect();
    let cleaned = cleaned.trim_start_matches('.').trim().to_owned();
    if cleaned.is_empty() {
        "upload".to_owned()
    } else {
        cleaned
    }
}

/// Sends a file the page picked as a tool's file argument (SEP-2631: inline or uploaded, as
/// the field allows) and answers the value to put in the arguments.
pub(crate) async fn upload(State(app): App, RawQuery(query): RawQuery, body: Bytes) -> Answer {
    let (tool, field, name) = upload_query(query.as_deref())?;
    let schema = app
        .client
        .list_tools()
        .await?
        .into_iter()
        .find(|t| t.name == tool)
        .map(|t| serde_json::to_value(t.input_schema).unwrap_or_default())
        .ok_or_else(|| ApiError::bad(format!("tool: the server has no tool {tool:?}")))?;
    let decl = smcp_client::files::file_fields(&schema)
        .into_iter()
        .find(|f| f.name == field)
        .ok_or_else(|| ApiError::bad(format!("field: {field:?} is not a file field of {tool}")))?;
    let dir = app.uploads.join(app.id("u"));
    std::fs::create_dir(&dir)
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("upload: {e}")))?;
    let path = dir.join(safe_name(&name));
    let written = tokio::fs::write(&path, &body).await;
    let value = match written {
        Ok(()) => app
            .client
            .file_argument(&path, None, &decl.descriptor, None)
            .await
            .map_err(ApiError::from),
        Err(e) => Err(ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("upload: {e}"),
        )),
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Json(json!({ "value": value? })))
}

/// Opens the listen stream (once): every change the server offers to announce.
pub(crate) async fn listen(State(app): App) -> Answer {
    if app
        .listening
        .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        return Ok(Json(json!({})));
    }
    let caps = &app.server["capabilities"];
    let offered = |k: &str| (caps[k]["listChanged"] == json!(true)).then_some(true);
    let filter = smcp_client::SubscriptionFilter {
        tools_list_changed: offered("tools"),
        prompts_list_changed: offered("prompts"),
        resources_list_changed: offered("resources"),
        ..Default::default()
    };
    let task = {
        let app = Arc::clone(&app);
        async move {
            use futures_util::StreamExt as _;
            let mut events = app.client.listen(filter);
            let mut error = None;
            while let Some(event) = events.next().await {
                let (method, params) = match event {
                    Err(e) => {
                        error = Some(e.to_string());
                        break;
                    }
                    Ok(SubscriptionEvent::Acknowledged(granted)) => {
                        app.feed.publish(&json!({
                            "type": "listen", "state": "open", "error": null, "granted": granted,
                        }));
                        continue;
                    }
                    Ok(SubscriptionEvent::ToolsListChanged) => {
                        ("notifications/tools/list_changed", json!({}))
                    }
                    Ok(SubscriptionEvent::PromptsListChanged) => {
                        ("notifications/prompts/list_changed", json!({}))
                    }
                    Ok(SubscriptionEvent::ResourcesListChanged) => {
                        ("notifications/resources/list_changed", json!({}))
                    }
                    Ok(SubscriptionEvent::ResourceUpdated { uri }) => {
                        ("notifications/resources/updated", json!({"uri": uri}))
                    }
                    Ok(SubscriptionEvent::Task(task)) => {
                        ("notifications/tasks", json!({"task": task}))
                    }
                    Ok(SubscriptionEvent::Other(n)) => {
                        app.feed.publish(&json!({"type": "notification", "method": n.method, "params": n.params}));
                        continue;
                    }
                    Ok(_) => continue,
                };
                app.feed
                    .publish(&json!({"type": "notification", "method": method, "params": params}));
            }
            app.listening
                .store(false, std::sync::atomic::Ordering::SeqCst);
            app.feed
                .publish(&json!({"type": "listen", "state": "closed", "error": error}));
        }
    };
    tokio::spawn(scope::CALL.scope("listen".to_owned(), task));
    Ok(Json(json!({})))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn upload_names_cannot_leave_the_upload_directory() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("..\\x\\.bashrc"), "bashrc");
        assert_eq!(safe_name("a b;$(rm).png"), "a brm.png");
        assert_eq!(safe_name(""), "upload");
        assert_eq!(safe_name("...."), "upload");
    }

    #[test]
    fn the_upload_query_names_tool_and_field() {
        let (tool, field, name) =
            upload_query(Some("tool=ocr&field=image&name=scan%201.png")).unwrap();
        assert_eq!(
            (tool.as_str(), field.as_str(), name.as_str()),
            ("ocr", "image", "scan 1.png")
        );
        let e = upload_query(Some("tool=ocr")).unwrap_err();
        assert!(e.1.starts_with("field:"), "{}", e.1);
    }
}
