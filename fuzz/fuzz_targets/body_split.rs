//! The one-pass body parser against the precise one (issue #16 item 10): whenever the one pass
//! accepts a body, the precise parser accepts it too and reads the same request (id, method,
//! typed params, `_meta`, the MRTR members), and the `_meta` it keeps raw is one the full
//! parser reads, on either route: so its view, which skips the scan for what the full parser
//! refuses, is the one `MetaView::parse` gives.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use smcp_proto::jsonrpc::{Incoming, IncomingRequest, Message, ParseError};
use smcp_proto::meta::MetaView;

/// The vouched view of a request's `_meta` is the one the scanning parse gives.
fn same_view(request: &IncomingRequest<'_>) {
    if let Some(raw) = &request.meta {
        assert_eq!(
            format!("{:?}", raw.view()),
            format!("{:?}", MetaView::parse(raw))
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let precise = Message::from_slice(data);
    if let Some(one) = smcp_proto::fuzzing::one_pass(data) {
        assert!(smcp_proto::fuzzing::screen_passes(data));
        let request = match precise {
            Ok(Message::Request(request)) => request,
            other => panic!("the one pass accepts what the precise parser reads as {other:?}"),
        };
        let two = IncomingRequest::from_request(request);
        assert_eq!(one.id, two.id);
        assert_eq!(one.method, two.method);
        assert_eq!(one.mrtr_members, two.mrtr_members);
        assert!(one.params.is_ok());
        assert_eq!(one.params, two.params);
        let meta = |m: &IncomingRequest<'_>| {
            m.meta.as_ref().map(|raw| {
                serde_json::from_str::<Value>(raw.get())
                    .unwrap_or_else(|e| panic!("a raw _meta the full parser refuses ({e})"))
            })
        };
        assert_eq!(meta(&one), meta(&two));
        same_view(&one);
        same_view(&two);
        return;
    }
    // Declined: `Incoming::parse` gives the precise parser's verdict.
    let parsed = Incoming::parse(data);
    if let Ok(Incoming::Request(request)) = &parsed {
        same_view(request);
    }
    match (parsed, precise) {
        (Ok(Incoming::Request(_)), Ok(Message::Request(_)))
        | (Ok(Incoming::Notification(_)), Ok(Message::Notification(_)))
        | (Ok(Incoming::Response(_)), Ok(Message::Result(_) | Message::Error(_))) => {}
        (Err(ParseError::Json(_)), Err(ParseError::Json(_))) => {}
        (Err(a @ ParseError::Invalid { .. }), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("Incoming::parse {a:?} but the precise parser {b:?}"),
    }
});
