//! `smcp login`, stored tokens and `smcp logout` against a real authorization server: the
//! npm `oidc-provider` (`scripts/oidc-provider`) on a loopback port, protecting smcpd's demo
//! server (in-process, port 0, behind `smcp_server::auth::AuthLayer`). The built binary
//! discovers the provider, registers itself dynamically, prints the authorization URL; the
//! test walks the provider's login and consent pages as a browser would and follows the
//! redirect to the CLI's loopback listener. `SMCP_OIDC=skip` disables this test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::oidc;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use oidc::{Browser, Provider};
use smcp_server::auth::{
    AuthLayer, DpopConfig, JwtVerifier, ProtectedResourceMetadata, ScopePolicy,
};

/// smcpd's demo server behind the authorization layer for `issuer`, on its own runtime
/// thread; returns the `/mcp` URL.
fn start_protected_smcpd(issuer: &str) -> String {
    start_protected(issuer, false)
}

/// The same, with DPoP-bound tokens required when `dpop`.
fn start_protected(issuer: &str, dpop: bool) -> String {
    let issuer = issuer.to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let verifier = JwtVerifier::builder(&issuer)
                .audience(&url)
                .build()
                .unwrap();
            let metadata = ProtectedResourceMetadata::new(&url)
                .unwrap()
                .authorization_server(&issuer)
                .scopes_supported(["mcp:tools"]);
            let mut layer = AuthLayer::builder(verifier, metadata)
                .scopes(ScopePolicy::builder().require("mcp:tools").build())
                .protect_only("/mcp");
            if dpop {
                layer = layer.dpop(DpopConfig::builder().required(true).build().unwrap());
            }
            let layer = layer.build();
            let server = smcpd::demo_server(smcp_server::SecurityPolicy::loopback()).unwrap();
            let app = tower::Layer::layer(&layer, server.endpoint("/mcp"));
            tx.send(url).unwrap();
            smcp_server::serve(
                listener,
                app,
                smcp_server::ServeOptions::default(),
                std::future::pending(),
            )
            .await
            .unwrap();
        });
    });
    rx.recv().unwrap()
}

fn smcp(url: &str, tokens: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_smcp"));
    c.arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        .env_remove("SMCP_TOKEN")
        .env("SMCP_TOKEN_DIR", tokens)
        .env("SMCP_CACHE_DIR", tokens.join("cache"))
        .stdin(Stdio::null());
    c
}

fn run(url: &str, tokens: &Path, args: &[&str]) -> Output {
    smcp(url, tokens, args).output().unwrap()
}

#[tokio::test]
async fn smcp_login_against_a_real_provider_then_commands_use_the_stored_tokens() {
    if oidc::skipped() {
        return;
    }
    let provider = Provider::start();
    let url = start_protected_smcpd(&provider.issuer);
    let dir = std::env::temp_dir().join(format!("smcp-cli-oidc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    // Not logged in: the 401 stands, with the hint.
    let o = run(&url, &dir, &["tools"]);
    assert_eq!(o.status.code(), Some(6), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("smcp login"));

    // Login: the CLI prints the provider's authorization URL and waits on its listener.
    let mut child = smcp(&url, &dir, &["login", "--no-browser"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let prefix = format!("{}/auth?", provider.issuer);
    let auth_url = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.trim().starts_with(&prefix).then(|| l.trim().to_owned()))
    })
    .await
    .unwrap()
    .expect("the authorization URL on stderr");
    assert!(
        auth_url.contains("code_challenge_method=S256"),
        "{auth_url}"
    );
    assert!(auth_url.contains("resource="), "{auth_url}");

    let redirect = Browser::new("alice").authorize(&auth_url).await;
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.contains("code="),
        "{redirect}"
    );
    let page = reqwest::get(&redirect).await.unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()),
    )
    .await
    .expect("smcp login finished")
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Logged in"));

    // One token file, mode 0600.
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The next commands send the stored token.
    let o = run(&url, &dir, &["tools", "--json"]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("echo"));
    let o = run(&url, &dir, &["call", "echo", "--arg", "text=signed in"]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("signed in"));

    // Logout forgets them: the server refuses again.
    assert!(run(&url, &dir, &["logout"]).status.success());
    assert_eq!(run(&url, &dir, &["tools"]).status.code(), Some(6));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn machine_flags_get_dpop_bound_tokens_without_a_browser() {
    if oidc::skipped() {
        return;
    }
    let provider = Provider::start_with(&oidc::ProviderOptions {
        dpop: true,
        ..oidc::ProviderOptions::default()
    });
    let url = start_protected(&provider.issuer, true);
    let dir = std::env::temp_dir().join(format!("smcp-cli-oidc-m2m-{}", std::process::id()));
    let (id, secret) = oidc::M2M_CLIENT;
    // Any command runs the client credentials grant itself; --dpop insists on a bound token.
    let flags = [
        "--client-id",
        id,
        "--client-secret",
        secret,
        "--client-credentials",
        "--dpop",
    ];
    let out = run(&url, &dir, &[&flags[..], &["tools"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("echo"));
    let stored: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let tokens: serde_json::Value = serde_json::from_str(&stored[0]).unwrap();
    assert_eq!(tokens["tokens"]["token_type"], "DPoP");
    assert!(tokens["tokens"]["dpop_key"].is_string());
    // The next run loads the stored token and its key, and proves possession again.
    let out = run(&url, &dir, &["tools"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Flags that cannot work together are a usage error (exit 2), before any request.
    let out = run(&url, &dir, &["--idp-token-env", "X", "tools"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--idp-token-endpoint"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
