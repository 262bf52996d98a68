//! Resource subscriptions through the gateway: a listener's `resourceSubscriptions` are
//! watched at the upstream owning each URI (a listed resource or a template's), at
//! 2026-07-28 and in a 2025-11-25 session; the acknowledgement grants only what an upstream
//! watches; each update an upstream sends reaches the listener.

use std::time::Duration;

use futures_util::StreamExt as _;
use smcp_client::{Client, Subscription, SubscriptionEvent, SubscriptionFilter};
use smcp_server::prelude::*;
use smcp_server::resource_template;

use crate::common::{self, Served};

/// An upstream serving `{base}/memo` and `{base}/notes/{id}`, watching them when
/// `subscribe`.
async fn upstream(base: &str, subscribe: bool) -> (Server, Served) {
    let server = Server::builder("upstream", "1")
        .resources_subscribe(subscribe)
        .resource(
            resource(format!("{base}/memo"), "memo").handler(|read| async move {
                Ok(vec![TextResourceContents::new(read.uri, "memo").into()])
            }),
        )
        .resource(
            resource_template(format!("{base}/notes/{{id}}"), "notes").handler(|read| async move {
                Ok(vec![TextResourceContents::new(read.uri, "note").into()])
            }),
        )
        .build()
        .unwrap();
    let served = common::serve_server(&server).await;
    (server, served)
}

/// The next event that is not a list change (the gateway's own catalog may change).
async fn next(subscription: &mut Subscription) -> SubscriptionEvent {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("an event in time")
            .expect("the stream is open")
            .expect("no error");
        match event {
            SubscriptionEvent::ToolsListChanged
            | SubscriptionEvent::PromptsListChanged
            | SubscriptionEvent::ResourcesListChanged => {}
            other => return other,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_of_each_era_reach_the_gateways_listener() {
    let (now, now_served) = upstream("now:/", true).await;
    let (old, old_served) = upstream("old:/", true).await;
    let (_plain, plain_served) = upstream("plain:/", false).await;
    let (_gateway, front) = common::gateway(&format!(
        "[[upstream]]\nname = \"now\"\nurl = \"{}\"\n\n\
         [[upstream]]\nname = \"old\"\nurl = \"{}\"\nera = \"2025-11-25\"\n\n\
         [[upstream]]\nname = \"plain\"\nurl = \"{}\"\n",
        now_served.url, old_served.url, plain_served.url
    ))
    .await;
    let front_served = common::serve_server(&front).await;
    let client = Client::builder(&front_served.url).build().unwrap();

    let asked = [
        "now://memo",
        "now://notes/7",
        "old://memo",
        "plain://memo",
        "nobody://memo",
    ];
    let mut subscription = client.listen(SubscriptionFilter {
        resource_subscriptions: Some(asked.iter().map(|u| (*u).to_owned()).collect()),
        ..SubscriptionFilter::default()
    });
    let SubscriptionEvent::Acknowledged(granted) = next(&mut subscription).await else {
        panic!("the acknowledgement comes first");
    };
    // Not the upstream that cannot watch, not a URI nobody serves.
    assert_eq!(
        granted.resource_subscriptions.unwrap(),
        ["now://memo", "now://notes/7", "old://memo"]
    );

    for (server, uri) in [
        (&now, "now://memo"),
        (&now, "now://notes/7"),
        (&old, "old://memo"),
        // A sub-resource of one subscribed to, once.
        (&now, "now://memo/part"),
    ] {
        server.notify_resource_updated(uri);
        assert_eq!(
            next(&mut subscription).await,
            SubscriptionEvent::ResourceUpdated {
                uri: uri.to_owned()
            },
            "{uri}"
        );
    }
    // A URI not subscribed to is not delivered, nor is any update twice: the next update is
    // the one asked for.
    now.notify_resource_updated("now://notes/8");
    old.notify_resource_updated("old://memo");
    assert_eq!(
        next(&mut subscription).await,
        SubscriptionEvent::ResourceUpdated {
            uri: "old://memo".to_owned()
        }
    );

    // A second listener of a URI already watched is granted at once and hears it too.
    let mut second = client.listen(SubscriptionFilter {
        resource_subscriptions: Some(vec!["now://memo".to_owned()]),
        ..SubscriptionFilter::default()
    });
    let SubscriptionEvent::Acknowledged(granted) = next(&mut second).await else {
        panic!("the acknowledgement comes first");
    };
    assert_eq!(granted.resource_subscriptions.unwrap(), ["now://memo"]);
    now.notify_resource_updated("now://memo");
    for listener in [&mut subscription, &mut second] {
        assert_eq!(
            next(listener).await,
            SubscriptionEvent::ResourceUpdated {
                uri: "now://memo".to_owned()
            }
        );
    }
}

#[tokio::test]
async fn without_an_upstream_that_watches_no_subscription_is_claimed() {
    let (_plain, plain_served) = upstream("plain:/", false).await;
    let (_gateway, front) = common::gateway(&format!(
        "[[upstream]]\nname = \"plain\"\nurl = \"{}\"\n",
        plain_served.url
    ))
    .await;
    let (_, discovered) = common::post(
        &front.service(),
        "server/discover",
        None,
        serde_json::json!({"_meta": common::meta(serde_json::json!({}))}),
    )
    .await;
    let resources = &discovered["result"]["capabilities"]["resources"];
    assert_eq!(resources["listChanged"], true, "{discovered}");
    assert!(resources.get("subscribe").is_none(), "{discovered}");
}
