//! The real `smcpd` binary with `--auth-issuer` pointing at a test authorization server on
//! 127.0.0.1:0 (RFC 8414 metadata and a JWKS; keys generated per run): `401` without a
//! token, `200` with one, the Protected Resource Metadata served; `--auth-dpop-required` with
//! nonces (a plain bearer token refused, a bound token with a proof and the issued nonce
//! accepted); two instances with `--auth-dpop-required` sharing a real Redis (a proof
//! redeemed on one is refused on the other, `SMCP_REDIS=skip` skips it); and the loud
//! warning when it listens beyond loopback without authorization.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub(crate) struct Key {
    pub(crate) encoding: EncodingKey,
    pub(crate) jwk: Jwk,
}

pub(crate) fn key() -> Key {
    let pair = rcgen::KeyPair::generate().unwrap();
    let encoding = EncodingKey::from_ec_der(&pair.serialize_der());
    let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("k1".to_owned());
    Key { encoding, jwk }
}

pub(crate) fn token(key: &Key, iss: &str, aud: &str, scope: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".to_owned());
    let claims = json!({"sub": "alice", "iss": iss, "aud": aud, "scope": scope, "exp": now + 600});
    jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap()
}

pub(crate) async fn authorization_server(jwk: Jwk) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
    });
    let jwks = serde_json::to_value(JwkSet { keys: vec![jwk] }).unwrap();
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(jwks) }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    issuer
}

/// smcpd with `args`: its endpoint URL, and stderr lines up to its ready line.
struct Running {
    child: Child,
    url: String,
    stderr: Vec<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_smcpd"))
        .args(["--log", "smcpd=info,smcp_server=info", "--no-files"])
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("smcpd logs its ready line");
        let ready = line.contains("smcpd ready");
        lines.push(line);
        if ready {
            break;
        }
    }
    Running {
        child,
        url,
        stderr: lines,
    }
}

fn discover() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
}

async fn post(url: &str, bearer: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(discover().to_string());
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

// Multi-threaded: the test authorization server answers while this thread waits for smcpd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_issuer_protects_the_endpoint() {
    let key = key();
    let issuer = authorization_server(key.jwk.clone()).await;
    let smcpd = start(&[
        "--listen",
        "127.0.0.1:0",
        "--auth-issuer",
        &issuer,
        "--auth-scope",
        "mcp",
    ]);
    let url = smcpd.url.clone();
    let origin = url.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");

    let refused = post(&url, None).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp""#)
    );

    let wrong = token(&key, &issuer, "https://other.example/mcp", "mcp");
    let refused = post(&url, Some(&wrong)).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            r#"Bearer error="invalid_token", error_description="the access token was not issued for this resource (aud)", resource_metadata="{metadata_url}", scope="mcp""#
        )
    );

    let good = token(&key, &issuer, &url, "mcp");
    let accepted = post(&url, Some(&good)).await;
    assert_eq!(accepted.status(), 200);
    let body: Value = accepted.json().await.unwrap();
    assert_eq!(body["result"]["supportedVersions"], json!(["2026-07-28"]));

    let document: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        document,
        json!({
            "resource": url,
            "authorization_servers": [issuer],
            "scopes_supported": ["mcp"],
            "bearer_methods_supported": ["header"],
            "resource_name": "smcpd",
        })
    );
    assert!(
        smcpd.stderr.iter().all(|l| !l.contains("NO AUTHORIZATION")),
        "{:?}",
        smcpd.stderr
    );
}

#[test]
fn a_non_loopback_listener_without_auth_warns_loudly() {
    let exposed = start(&["--listen", "0.0.0.0:0"]);
    assert!(
        exposed
            .stderr
            .iter()
            .any(|l| l.contains("WARN") && l.contains("NO AUTHORIZATION")),
        "{:?}",
        exposed.stderr
    );
    let local = start(&["--listen", "127.0.0.1:0"]);
    assert!(
        local.stderr.iter().all(|l| !l.contains("NO AUTHORIZATION")),
        "{:?}",
        local.stderr
    );
}

/// A DPoP proof of `POST url` for `token`, signed by `key` (its public JWK in the header).
fn dpop_proof(key: &Key, url: &str, token: &str, nonce: Option<&str>) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(token.as_bytes()));
    let mut claims = json!({
        "jti": format!("{now}-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)),
        "htm": "POST", "htu": url, "iat": now, "ath": ath,
    });
    if let Some(nonce) = nonce {
        claims["nonce"] = json!(nonce);
    }
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("dpop+jwt".to_owned());
    let mut jwk = key.jwk.clone();
    jwk.common.key_id = None;
    header.jwk = Some(jwk);
    jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap()
}

/// An access token of `iss` for `aud`, signed by `key` and bound (`cnf.jkt`) to `client`'s key.
fn bound_token(key: &Key, iss: &str, aud: &str, client: &Key) -> String {
    let mut jwk = serde_json::to_value(&client.jwk).unwrap();
    jwk.as_object_mut().unwrap().remove("kid");
    let jkt = smcp_server::auth::jwk_thumbprint(&jwk).unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".to_owned());
    let claims =
        json!({"sub": "alice", "iss": iss, "aud": aud, "exp": now + 600, "cnf": {"jkt": jkt}});
    jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap()
}

/// POSTs the JSON-RPC request `body` with `Authorization: DPoP token` and the proof.
async fn post_dpop(url: &str, token: &str, proof: &str, body: &Value) -> reqwest::Response {
    crate::support::post_rpc(&reqwest::Client::new(), url, body)
        .header("authorization", format!("DPoP {token}"))
        .header("dpop", proof)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_dpop_required_binds_tokens_to_the_client_key() {
    let key = key();
    let client = self::key();
    let issuer = authorization_server(key.jwk.clone()).await;
    let smcpd = start(&[
        "--listen",
        "127.0.0.1:0",
        "--auth-issuer",
        &issuer,
        "--auth-dpop-required",
        "--auth-dpop-nonce",
    ]);
    assert!(
        smcpd
            .stderr
            .iter()
            .any(|l| l.contains("WARN") && l.contains("SMCPD_AUTH_DPOP_NONCE_KEY")),
        "{:?}",
        smcpd.stderr
    );
    let url = smcpd.url.clone();
    let origin = url.trim_end_matches("/mcp");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    let algs = "ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA";

    // A plain bearer token is refused.
    let plain = token(&key, &issuer, &url, "mcp");
    let refused = post(&url, Some(&plain)).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            r#"DPoP error="invalid_token", error_description="this resource requires DPoP-bound access tokens", algs="{algs}", resource_metadata="{metadata_url}""#
        )
    );

    // A bound token with a proof but no nonce gets one, and the retry passes.
    let bound = bound_token(&key, &issuer, &url, &client);
    let first = post_dpop(
        &url,
        &bound,
        &dpop_proof(&client, &url, &bound, None),
        &discover(),
    )
    .await;
    assert_eq!(first.status(), 401);
    assert!(
        first.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with(r#"DPoP error="use_dpop_nonce""#)
    );
    let nonce = first.headers()["dpop-nonce"].to_str().unwrap().to_owned();
    let retry = post_dpop(
        &url,
        &bound,
        &dpop_proof(&client, &url, &bound, Some(&nonce)),
        &discover(),
    )
    .await;
    assert_eq!(retry.status(), 200);

    let document: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["dpop_bound_access_tokens_required"], true);
    assert_eq!(
        document["dpop_signing_alg_values_supported"],
        json!(algs.split(' ').collect::<Vec<_>>())
    );
}

/// The `smcp_requests_total` lines of `tools/call` in the Prometheus text of `metrics`.
#[cfg(all(feature = "redis", feature = "metrics"))]
async fn tools_call_counts(metrics: &str) -> Vec<String> {
    let text = reqwest::get(metrics).await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with(r#"smcp_requests_total{method="tools/call""#))
        .map(str::to_owned)
        .collect()
}

/// Two instances behind one public URL sharing a real Redis: a DPoP proof redeemed on one
/// is refused on the other (its `jti` is in the shared replay guard), before any handler.
#[cfg(all(feature = "redis", feature = "metrics"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dpop_proof_replayed_on_another_instance_sharing_redis_is_refused() {
    if smcp_test_support::redis::skipped() {
        return;
    }
    let redis = smcp_test_support::redis::RedisServer::start();
    let key = key();
    let client = self::key();
    let issuer = authorization_server(key.jwk.clone()).await;
    // The URL clients use, a load balancer's in front of both: the token's audience and
    // every proof's htu. Each instance is reached at its own address.
    let balancer = format!("http://127.0.0.1:{}", smcp_test_support::free_port());
    let public = format!("{balancer}/mcp");
    let redis_url = redis.url();
    let instance = || {
        let running = start(&[
            "--listen",
            "127.0.0.1:0",
            "--public-url",
            &public,
            "--auth-issuer",
            &issuer,
            "--auth-dpop-required",
            "--redis",
            &redis_url,
            "--metrics-listen",
            "127.0.0.1:0",
        ]);
        let metrics = running
            .stderr
            .iter()
            .find_map(|l| {
                let from = l.find("metrics on http://")? + "metrics on ".len();
                let url = &l[from..];
                Some(url[..url.find(',').unwrap_or(url.len())].to_owned())
            })
            .unwrap_or_else(|| panic!("no metrics line: {:?}", running.stderr));
        (running, metrics)
    };
    let (a, a_metrics) = instance();
    let (b, b_metrics) = instance();
    let bound = bound_token(&key, &issuer, &public, &client);
    let echo = |text: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": text}, "_meta": discover()["params"]["_meta"]}})
    };

    // Redeemed on A: the handler ran.
    let proof = dpop_proof(&client, &public, &bound, None);
    let accepted = post_dpop(&a.url, &bound, &proof, &echo("once")).await;
    assert_eq!(accepted.status(), 200);
    let body: Value = accepted.json().await.unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "once", "{body}");

    // The same proof on B: refused by the shared replay guard, no result.
    let replayed = post_dpop(&b.url, &bound, &proof, &echo("twice")).await;
    assert_eq!(replayed.status(), 401);
    let challenges: Vec<_> = replayed
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let metadata_url = format!("{balancer}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        challenges,
        [format!(
            r#"DPoP error="invalid_dpop_proof", error_description="DPoP proof jti was already used", algs="ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA", resource_metadata="{metadata_url}""#
        )]
    );
    assert!(replayed.headers().get("dpop-nonce").is_none());
    let body: Value = replayed.json().await.unwrap();
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001,
            "message": "Unauthorized: DPoP proof jti was already used"}})
    );

    // B takes the token with a fresh proof, and its endpoint counted that call only: the
    // replayed one never reached it (no handler ran). A ran its one call.
    let fresh = dpop_proof(&client, &public, &bound, None);
    let accepted = post_dpop(&b.url, &bound, &fresh, &echo("fresh")).await;
    assert_eq!(accepted.status(), 200);
    let body: Value = accepted.json().await.unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "fresh", "{body}");
    let one = [r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 1"#];
    assert_eq!(tools_call_counts(&b_metrics).await, one);
    assert_eq!(tools_call_counts(&a_metrics).await, one);
}
