//! MCP Apps (SEP-1865) through the server: the extension in `server/discover`, a view
//! listed and read with its MIME type and `_meta.ui`, tools linked to it, and what is
//! refused when the server is built (a tool whose `_meta.ui` is malformed or names a URI
//! that is not `ui://`; a view without `ui://`, without a document, or with an origin that
//! would smuggle a CSP directive).

#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common::*;

use serde_json::{Value, json};
use smcp_proto::ext::ui::{EXTENSION_ID, MIME_TYPE, UiResourceMeta, UiToolMeta, Visibility};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::apps::{Apps, Permission, ToolUi, ViewError, view};
use smcp_server::{BuildError, Server, tool};

const DOC: &str = "<!DOCTYPE html><html><body><button id=b>+1</button></body></html>";

fn counter() -> Server {
    Server::builder("counter", "1")
        .extension(Apps)
        .resource(
            view("ui://counter/view", "Counter")
                .title("A counter")
                .html(DOC)
                .connect_domain("https://api.example.com")
                .resource_domain("https://cdn.example.com")
                .permission(Permission::ClipboardWrite)
                .prefers_border(true)
                .build()
                .unwrap(),
        )
        .tool(
            tool("count")
                .description("Counts")
                .ui(UiToolMeta::new("ui://counter/view"))
                .handler(|_call| async { Ok(CallToolResult::text("1")) }),
        )
        .tool(
            tool("reset")
                .meta(serde_json::from_value(json!({"other": 1})).unwrap())
                .ui(UiToolMeta::new("ui://counter/view").visibility([Visibility::App]))
                .handler(|_call| async { Ok(CallToolResult::text("0")) }),
        )
        .build()
        .unwrap()
}

fn result(reply: &Reply) -> Value {
    let json = reply.json();
    assert!(json.get("error").is_none(), "{json}");
    json["result"].clone()
}

#[tokio::test]
async fn a_view_is_declared_listed_read_and_linked_from_its_tools() {
    let svc = counter().service();
    let discover = result(&call(&svc, &body(json!(1), "server/discover", json!({}))).await);
    assert_eq!(
        discover["capabilities"]["extensions"][EXTENSION_ID],
        json!({}),
        "{discover}"
    );

    let tools = result(&call(&svc, &body(json!(2), "tools/list", json!({}))).await);
    let by_name = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        by_name("count")["_meta"],
        json!({"ui": {"resourceUri": "ui://counter/view"}})
    );
    // The tool's other metadata stays beside `ui`.
    assert_eq!(
        by_name("reset")["_meta"],
        json!({"other": 1, "ui": {"resourceUri": "ui://counter/view", "visibility": ["app"]}})
    );
    let linked = UiToolMeta::from_meta(by_name("reset")["_meta"].as_object())
        .unwrap()
        .unwrap();
    assert!(!linked.model_visible() && linked.app_callable());

    let listed = result(&call(&svc, &body(json!(3), "resources/list", json!({}))).await);
    let resource = &listed["resources"][0];
    assert_eq!(resource["uri"], "ui://counter/view");
    assert_eq!(resource["mimeType"], MIME_TYPE);
    assert_eq!(resource["size"], DOC.len());
    let expected_ui = json!({
        "csp": {"connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": true
    });
    assert_eq!(resource["_meta"]["ui"], expected_ui);

    let read = result(
        &call(
            &svc,
            &body(
                json!(4),
                "resources/read",
                json!({"uri": "ui://counter/view"}),
            ),
        )
        .await,
    );
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], MIME_TYPE);
    assert_eq!(contents["text"], DOC);
    assert_eq!(contents["_meta"]["ui"], expected_ui);
    let meta = UiResourceMeta::from_meta(contents["_meta"].as_object())
        .unwrap()
        .unwrap();
    let policy = meta.content_security_policy();
    assert!(
        policy.contains("connect-src https://api.example.com"),
        "{policy}"
    );
    assert_eq!(meta.allow_attribute(), "clipboard-write");
}

#[test]
fn a_tool_linking_anything_but_a_ui_uri_is_refused_at_build_naming_it() {
    for (meta, expected) in [
        (
            json!({"ui": {"resourceUri": "https://evil.example/x"}}),
            "_meta.ui.resourceUri: \"https://evil.example/x\" is not a ui:// URI",
        ),
        (
            json!({"ui": {"visibility": ["everyone"]}}),
            "_meta.ui: unknown variant `everyone`",
        ),
    ] {
        let err = Server::builder("t", "1")
            .extension(Apps)
            .tool(
                tool("bad")
                    .meta(serde_json::from_value(meta).unwrap())
                    .handler(|_call| async { Ok(CallToolResult::text("x")) }),
            )
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, BuildError::Extension { item, .. } if item == "bad"),
            "{err}"
        );
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn a_view_is_refused_without_ui_uri_document_or_with_a_smuggled_directive() {
    assert_eq!(
        view("https://x/view", "v").html(DOC).build().unwrap_err(),
        ViewError::Uri {
            uri: "https://x/view".to_owned()
        }
    );
    assert!(matches!(
        view("ui://v", "v").build().unwrap_err(),
        ViewError::NoDocument { .. }
    ));
    let err = view("ui://v", "v")
        .html(DOC)
        .connect_domain("https://a.example; script-src *")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "view \"ui://v\": csp.connectDomains: \"https://a.example; script-src *\" is not an origin (no spaces, quotes, ';' or ',')"
    );
    let big = "x".repeat(smcp_server::apps::MAX_VIEW_BYTES + 1);
    assert!(matches!(
        view("ui://v", "v").html(big).build().unwrap_err(),
        ViewError::TooLarge { .. }
    ));
}
