//! Prompts, and completion of their arguments (and of resource template variables).
//!
//! ```sh
//! cargo run -p smcp-examples --bin prompts -- --listen 127.0.0.1:3000
//! cargo run -p smcp -- prompts
//! cargo run -p smcp -- prompt review --arg language=rust --arg focus=errors
//! ```

use smcp_server::proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_server::proto::server::utilities::completion::CompletionReference;
use smcp_server::{Completion, CompletionRequest, HandlerError, ServeOptions, Server, prompt};

/// What the `language` argument can be.
const LANGUAGES: [&str; 6] = ["c", "go", "python", "ruby", "rust", "typescript"];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    // ANCHOR: server
    let server = Server::builder("prompts", "1.0.0")
        .prompt(
            prompt("review")
                .title("Code review")
                .description("Asks for a review of code in one language")
                .argument("language", "The programming language", true)
                .argument("focus", "What to look at first", false)
                // Required arguments are checked before the handler runs.
                .handler(|get| async move {
                    let language = get.arg("language").unwrap_or_default();
                    let focus = get.arg("focus").unwrap_or("correctness");
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        format!("Review the following {language} code. Look at {focus} first."),
                    )]))
                }),
        )
        // One function completes every argument: it is told which prompt (or resource
        // template) and which argument, what was typed so far, and the arguments already set.
        .completion(|request: CompletionRequest| async move {
            let is_review =
                matches!(&request.reference, CompletionReference::Prompt(p) if p.name == "review");
            if !is_review {
                return Ok(Completion::default());
            }
            let typed = request.value.to_lowercase();
            let values: Vec<String> = match request.argument.as_str() {
                "language" => LANGUAGES
                    .iter()
                    .filter(|l| l.starts_with(&typed))
                    .map(|l| (*l).to_owned())
                    .collect(),
                "focus" => ["correctness", "errors", "naming", "performance"]
                    .iter()
                    .filter(|f| f.starts_with(&typed))
                    .map(|f| (*f).to_owned())
                    .collect(),
                other => {
                    return Err(HandlerError::invalid_params(format!(
                        "review has no argument {other:?}"
                    )));
                }
            };
            Ok(Completion::values(values))
        })
        .build()?;
    // ANCHOR_END: server
    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    Ok(())
}
