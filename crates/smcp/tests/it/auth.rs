//! `smcp login`, `smcp logout`, stored tokens and `--token`, against a small authorization
//! server and MCP endpoint served in-process (axum): the built binary runs the whole flow
//! (PRM, AS metadata, dynamic registration, PKCE, the loopback redirect driven by the test
//! as a browser would, the token request), stores the tokens in a 0600 file, reuses them on
//! the next command, and forgets them on logout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn params(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn get(p: &[(String, String)], k: &str) -> Option<String> {
    p.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

#[derive(Default)]
struct Seen {
    /// The code_challenge of the last authorization request.
    challenge: Option<String>,
    /// Authorization headers the MCP endpoint saw.
    bearers: Vec<Option<String>>,
}

/// An authorization server and an MCP endpoint that needs `Bearer at-1`, on one origin.
fn serve(seen: Arc<Mutex<Seen>>) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            tx.send(base.clone()).unwrap();
            let b1 = base.clone();
            let b2 = base.clone();
            let b3 = base.clone();
            let s1 = seen.clone();
            let s2 = seen.clone();
            let s3 = seen;
            let router = axum::Router::new()
                .route(
                    "/.well-known/oauth-protected-resource/mcp",
                    axum::routing::get(move || {
                        let b = b1.clone();
                        async move {
                            axum::Json(json!({"resource": format!("{b}/mcp"), "authorization_servers": [b]}))
                        }
                    }),
                )
                .route(
                    "/.well-known/oauth-authorization-server",
                    axum::routing::get(move || {
                        let b = b2.clone();
                        async move {
                            axum::Json(json!({
                                "issuer": b,
                                "authorization_endpoint": format!("{b}/authorize"),
                                "token_endpoint": format!("{b}/token"),
                                "registration_endpoint": format!("{b}/register"),
                                "code_challenge_methods_supported": ["S256"],
                                "token_endpoint_auth_methods_supported": ["none"],
                                "authorization_response_iss_parameter_supported": true,
                            }))
                        }
                    }),
                )
                .route(
                    "/register",
                    axum::routing::post(|| async {
                        (StatusCode::CREATED, axum::Json(json!({"client_id": "cli-1"})))
                    }),
                )
                .route(
                    "/authorize",
                    axum::routing::get(move |uri: Uri| {
                        let b = b3.clone();
                        let s = s1.clone();
                        async move {
                            let p = params(uri.query().unwrap_or(""));
                            assert_eq!(get(&p, "code_challenge_method").as_deref(), Some("S256"));
                            assert_eq!(get(&p, "resource"), Some(format!("{b}/mcp")));
                            assert_eq!(get(&p, "client_id").as_deref(), Some("cli-1"));
                            s.lock().unwrap().challenge = get(&p, "code_challenge");
                            let location = format!(
                                "{}?code=the-code&state={}&iss={}",
                                get(&p, "redirect_uri").unwrap(),
                                get(&p, "state").unwrap(),
                                b
                            );
                            (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
                        }
                    }),
                )
                .route(
                    "/token",
                    axum::routing::post(move |body: Bytes| {
                        let s = s2.clone();
                        async move {
                            let p = params(std::str::from_utf8(&body).unwrap());
                            assert_eq!(get(&p, "grant_type").as_deref(), Some("authorization_code"));
                            assert_eq!(get(&p, "code").as_deref(), Some("the-code"));
                            assert!(get(&p, "code_verifier").is_some());
                            assert!(s.lock().unwrap().challenge.is_some());
                            axum::Json(json!({
                                "access_token": "at-1", "token_type": "Bearer",
                                "expires_in": 3600, "refresh_token": "rt-1"
                            }))
                        }
                    }),
                )
                .route(
                    "/mcp",
                    axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                        let s = s3.clone();
                        async move { mcp(&s, &headers, &body) }
                    }),
                );
            axum::serve(listener, router).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

fn mcp(seen: &Mutex<Seen>, headers: &HeaderMap, body: &[u8]) -> Response {
    let auth = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned());
    seen.lock().unwrap().bearers.push(auth.clone());
    if auth.as_deref() != Some("Bearer at-1") {
        let host = headers.get(header::HOST).unwrap().to_str().unwrap();
        let challenge = format!(
            r#"Bearer resource_metadata="http://{host}/.well-known/oauth-protected-resource/mcp""#
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
        )
            .into_response();
    }
    let req: Value = serde_json::from_slice(body).unwrap();
    axum::Json(
        json!({"jsonrpc": "2.0", "id": req["id"], "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}
        ]}}),
    )
    .into_response()
}

fn smcp(url: &str, tokens: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_smcp"));
    c.arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        .env_remove("SMCP_LOG")
        .env_remove("SMCP_TOKEN")
        .env("SMCP_TOKEN_DIR", tokens)
        .env("SMCP_CACHE_DIR", tokens.join("cache"))
        .stdin(Stdio::null());
    c
}

fn run(url: &str, tokens: &Path, args: &[&str]) -> Output {
    smcp(url, tokens, args).output().unwrap()
}

/// A minimal HTTP/1.1 GET (the test plays the browser); returns the `Location` header.
fn browser_get(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .map(str::to_owned)
}

fn token_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn login_stores_tokens_0600_commands_reuse_them_logout_forgets_them() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let base = serve(seen.clone());
    let url = format!("{base}/mcp");
    let dir = std::env::temp_dir().join(format!("smcp-cli-tokens-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    // Before login: the server's 401 stands, with a hint to log in.
    let o = run(&url, &dir, &["tools"]);
    assert_eq!(o.status.code(), Some(6), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("smcp login"), "{err}");

    // Login: the authorization URL is printed; the test follows it like a browser.
    let mut child = smcp(&url, &dir, &["login", "--no-browser"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut auth_url = None;
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(u) = line.trim().strip_prefix(&format!("{base}/authorize")) {
            auth_url = Some(format!("{base}/authorize{u}"));
            break;
        }
        line.clear();
    }
    let auth_url = auth_url.expect("the authorization URL on stderr");
    let redirect = browser_get(&auth_url).expect("a redirect to the loopback listener");
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    browser_get(&redirect);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Logged in"),
        "{out:?}"
    );

    let files = token_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The next command sends the stored token without any flow.
    seen.lock().unwrap().bearers.clear();
    let o = run(&url, &dir, &["tools", "--json"]);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("echo"));
    assert!(
        seen.lock()
            .unwrap()
            .bearers
            .iter()
            .all(|b| b.as_deref() == Some("Bearer at-1")),
        "{:?}",
        seen.lock().unwrap().bearers
    );

    // Logout removes the file; the server refuses again.
    let o = run(&url, &dir, &["logout"]);
    assert!(o.status.success(), "{o:?}");
    assert!(token_files(&dir).is_empty());
    assert_eq!(run(&url, &dir, &["tools"]).status.code(), Some(6));

    // --token needs no stored tokens.
    let o = run(&url, &dir, &["--token", "at-1", "tools"]);
    assert!(o.status.success(), "{o:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
