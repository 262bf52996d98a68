//! The server leg: drives any server URL that exposes the documented fixture tools (README
//! §Server fixtures) and checks the SEP-2631 server behaviour.

mod declarations;
mod download;
mod inline;
mod outcome;
mod upload;
mod upload_call;

use crate::report::{LegResults, Recorder};
use crate::wire::{Wire, WireError};

/// Options of `smcp-conformance-files server`.
#[derive(Debug, Clone, Default)]
pub struct ServerLegOptions {
    /// The MCP endpoint, e.g. `https://127.0.0.1:8443/mcp`.
    pub url: String,
    /// PEM of the CA that signed the server's (and its descriptors') certificate.
    pub ca_pem: Option<Vec<u8>>,
    /// Allow `http://127.0.0.1` descriptors (development only).
    pub insecure_loopback_http: bool,
    /// How long the suite may wait for an upload descriptor to expire to test that it is then
    /// refused; zero (the default) reports that check as SKIPPED.
    pub max_expiry_wait: std::time::Duration,
}

/// Scenario names of the server leg, in run order.
pub const SCENARIOS: &[&str] = &[
    "files-capabilities",
    "files-declarations",
    "files-inline",
    "files-upload",
    "files-upload-integrity",
    "files-uris",
    "files-download",
    "files-elicitation",
];

/// Runs every scenario and returns the checks per scenario.
pub async fn run(opts: &ServerLegOptions) -> Result<LegResults, WireError> {
    let wire = Wire::new(
        &opts.url,
        opts.ca_pem.as_deref(),
        opts.insecure_loopback_http,
    )?;
    let mut out = LegResults::new();
    for name in SCENARIOS {
        let mut rec = Recorder::new();
        let res = match *name {
            "files-capabilities" => declarations::capabilities(&wire, &mut rec).await,
            "files-declarations" => declarations::declarations(&wire, &mut rec).await,
            "files-inline" => inline::run(&wire, &mut rec).await,
            "files-upload" => upload::upload(&wire, &mut rec, opts.max_expiry_wait).await,
            "files-upload-integrity" => upload::integrity(&wire, &mut rec).await,
            "files-uris" => upload::uris(&wire, &mut rec).await,
            "files-download" => download::download(&wire, &mut rec).await,
            _ => download::elicitation(&wire, &mut rec).await,
        };
        if let Err(e) = res {
            rec.push(
                "sep2631-scenario-completed",
                &crate::sep::FIXTURES,
                crate::report::Status::Failure,
                Some(format!("scenario aborted: {e}")),
                None,
            );
        }
        out.insert((*name).to_owned(), rec.into_checks());
    }
    Ok(out)
}
