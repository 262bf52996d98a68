//! `smcp discover`: the server's versions, capabilities and instructions (`server/discover`,
//! or what an older server said in `initialize`).

use serde_json::Value;

use super::ctx::{Ctx, print_json};

/// Runs `smcp discover`.
pub(crate) async fn run(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let client = ctx.client;
    let d = match client.discover().await {
        Err(e) if e.kind() == smcp_client::ErrorKind::UnsupportedInEra => {
            return show_session(ctx).await;
        }
        other => other?,
    };
    if ctx.json {
        return print_json(&d);
    }
    println!("protocol:  {} (stateless)", client.protocol_version());
    if let Some(info) = d.server_info() {
        println!(
            "server:    {} {}",
            info.title.as_deref().unwrap_or(&info.name),
            info.version
        );
    }
    println!("versions:  {}", d.supported_versions.join(", "));
    let caps = serde_json::to_value(&d.capabilities)?;
    let names: Vec<&str> = caps
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    println!("offers:    {}", names.join(", "));
    if let Some(i) = &d.instructions {
        println!("\n{i}");
    }
    Ok(())
}

/// `smcp discover` against an older revision: what the server said in `initialize`.
async fn show_session(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let Some(info) = ctx.client.session_info().await else {
        anyhow::bail!("no session with the server");
    };
    let era = match info.era {
        smcp_client::Era::HttpSse => "HTTP+SSE",
        _ => "stateful session",
    };
    if ctx.json {
        return print_json(&serde_json::json!({
            "protocolVersion": info.protocol_version,
            "era": era,
            "serverInfo": info.server_info,
            "capabilities": info.capabilities,
            "instructions": info.instructions,
        }));
    }
    println!(
        "protocol:  {} ({era}, negotiated by initialize)",
        info.protocol_version
    );
    if let Some(name) = info.server_info.get("name").and_then(Value::as_str) {
        let title = info.server_info.get("title").and_then(Value::as_str);
        let version = info.server_info.get("version").and_then(Value::as_str);
        println!(
            "server:    {} {}",
            title.unwrap_or(name),
            version.unwrap_or("")
        );
    }
    let names: Vec<&str> = info
        .capabilities
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    println!("offers:    {}", names.join(", "));
    if let Some(i) = &info.instructions {
        println!("\n{i}");
    }
    Ok(())
}
