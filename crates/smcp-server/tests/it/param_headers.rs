//! `Mcp-Param-*` against the arguments (issue #16 item 12): integers compare exactly at any
//! size, and a value with no header form (an array or object, which no annotated type
//! admits) expects no header, so the schema rejects the call with a tool error naming the
//! argument, not −32020. The header check still comes before schema validation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::{Value, json};

async fn probe(
    svc: &smcp_server::McpService,
    id: i64,
    args: Value,
    headers: &[(&str, &str)],
) -> Reply {
    let b = body(
        json!(id),
        "tools/call",
        json!({"name": "probe", "arguments": args}),
    );
    let mut builder = request(&b);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    send(svc, builder.body(full(&b)).unwrap()).await
}

#[tokio::test]
async fn big_integers_compare_exactly() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let max = u64::MAX.to_string();
    let reply = probe(
        &svc,
        1,
        json!({"count": u64::MAX}),
        &[("mcp-param-count", &max)],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json());
    assert_eq!(runs.get(), 1);
    // One less: the same f64, but not the same integer.
    probe(
        &svc,
        2,
        json!({"count": u64::MAX}),
        &[("mcp-param-count", "18446744073709551614")],
    )
    .await
    .assert_error(400, -32020, Some(json!(2)));
    probe(
        &svc,
        3,
        json!({"count": 9_007_199_254_740_993_i64}),
        &[("mcp-param-count", "9007199254740992")],
    )
    .await
    .assert_error(400, -32020, Some(json!(3)));
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn values_with_no_header_form_reach_schema_validation() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    for (i, args) in [
        json!({"region": ["us"]}),
        json!({"count": {"n": 1}}),
        json!({"nested": {"zone": [1]}}),
    ]
    .into_iter()
    .enumerate()
    {
        let reply = probe(&svc, i64::try_from(i).unwrap(), args.clone(), &[]).await;
        assert_eq!(reply.status, 200, "{args}: {}", reply.json());
        let result = &reply.json()["result"];
        assert_eq!(result["isError"], true, "{args}: {result}");
        // A header for a value that has no header form is still a mismatch.
        let reply = probe(
            &svc,
            9,
            args.clone(),
            &[
                ("mcp-param-region", "us"),
                ("mcp-param-count", "1"),
                ("mcp-param-zone", "1"),
            ],
        )
        .await;
        reply.assert_error(400, -32020, Some(json!(9)));
    }
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn header_checks_come_before_schema_validation() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    // Schema-invalid (`n` must be >= 0) and a header that disagrees: the header wins (A1 item 18).
    probe(
        &svc,
        1,
        json!({"region": "eu", "n": -1}),
        &[("mcp-param-region", "us")],
    )
    .await
    .assert_error(400, -32020, Some(json!(1)));
    // A fraction for an integer: mirrored as written, so the header agrees and the schema
    // says what is wrong.
    let reply = probe(
        &svc,
        2,
        json!({"count": 2.5}),
        &[("mcp-param-count", "2.5")],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.json());
    assert_eq!(reply.json()["result"]["isError"], true);
    assert_eq!(runs.get(), 0);
}
