//! How a transport frames a message on its stream ([`Framing`]), and the notifications a
//! handler sends during a request (`notifications/progress`, `notifications/message`), written
//! straight into their frame.
//!
//! A progress call is a hot path: a handler may send one per chunk of work. So the parts of a
//! frame that never change (the envelope, the method, the member names) are written as bytes,
//! and serde_json writes only what varies (the token, the numbers, the message, the data). A
//! test holds every frame to the one a `serde_json::Value` of the same notification gives.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use smcp_proto::basic::LoggingLevel;

/// How a transport frames one message on its stream: the bytes before and after the JSON
/// (SSE: `data: ` and a blank line; newline-delimited JSON: nothing and a newline). The core
/// writes a notification straight into its frame, in one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Written before the JSON.
    pub prefix: &'static [u8],
    /// Written after the JSON.
    pub suffix: &'static [u8],
}

impl Framing {
    /// `prefix`, `json`, `suffix` in one buffer.
    pub fn frame(&self, json: &[u8]) -> Bytes {
        let mut out = Vec::with_capacity(self.prefix.len() + json.len() + self.suffix.len());
        out.extend_from_slice(self.prefix);
        out.extend_from_slice(json);
        out.extend_from_slice(self.suffix);
        Bytes::from(out)
    }
}

/// The params of a notification, and the start of the envelope they go in.
pub(crate) trait Params {
    /// `{"jsonrpc":"2.0","method":…,"params":`, with the method needing no escape.
    const ENVELOPE: &'static [u8];

    /// Writes the params object, members in the order the schema lists them.
    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

/// `notifications/progress` params.
pub(crate) struct ProgressParams<'a> {
    pub(crate) progress_token: &'a Value,
    pub(crate) progress: WireNumber,
    pub(crate) total: Option<WireNumber>,
    pub(crate) message: Option<&'a str>,
}

impl Params for ProgressParams<'_> {
    const ENVELOPE: &'static [u8] =
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":"#;

    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"progressToken":"#);
        serde_json::to_writer(&mut *out, self.progress_token)?;
        out.extend_from_slice(br#","progress":"#);
        serde_json::to_writer(&mut *out, &self.progress)?;
        if let Some(total) = &self.total {
            out.extend_from_slice(br#","total":"#);
            serde_json::to_writer(&mut *out, total)?;
        }
        if let Some(message) = self.message {
            out.extend_from_slice(br#","message":"#);
            serde_json::to_writer(&mut *out, message)?;
        }
        out.push(b'}');
        Ok(())
    }
}

/// `notifications/message` params.
pub(crate) struct LogParams<'a> {
    pub(crate) level: LoggingLevel,
    pub(crate) logger: Option<&'a str>,
    pub(crate) data: &'a Value,
}

impl Params for LogParams<'_> {
    const ENVELOPE: &'static [u8] =
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":"#;

    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"level":"#);
        serde_json::to_writer(&mut *out, &self.level)?;
        if let Some(logger) = self.logger {
            out.extend_from_slice(br#","logger":"#);
            serde_json::to_writer(&mut *out, logger)?;
        }
        out.extend_from_slice(br#","data":"#);
        serde_json::to_writer(&mut *out, self.data)?;
        out.push(b'}');
        Ok(())
    }
}

/// A notification in its frame. Compact JSON has no line breaks (they are escaped inside
/// strings), so an SSE event is one `data:` line and a JSON line is one line.
pub(crate) fn notification_frame<P: Params>(
    framing: Framing,
    params: &P,
) -> serde_json::Result<Vec<u8>> {
    let mut frame = Vec::with_capacity(160);
    frame.extend_from_slice(framing.prefix);
    frame.extend_from_slice(P::ENVELOPE);
    params.write(&mut frame)?;
    frame.push(b'}');
    frame.extend_from_slice(framing.suffix);
    Ok(frame)
}

/// A progress value on the wire: integers stay integers (`50`, not `50.0`); a value that is
/// not finite is `null`, as for a `serde_json::Number`.
pub(crate) struct WireNumber(pub(crate) f64);

impl Serialize for WireNumber {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
            #[allow(clippy::cast_possible_truncation)]
            serializer.serialize_i64(v as i64)
        } else if v.is_finite() {
            serializer.serialize_f64(v)
        } else {
            serializer.serialize_unit()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};
    use smcp_proto::jsonrpc::Notification;

    const SSE: Framing = Framing {
        prefix: b"data: ",
        suffix: b"\n\n",
    };

    const LINE: Framing = Framing {
        prefix: b"",
        suffix: b"\n",
    };

    /// The reference: the notification as a `Value`, then framed by the SSE encoder.
    fn via_value(method: &str, params: Value) -> Vec<u8> {
        let json = serde_json::to_vec(&Notification {
            method: method.to_owned(),
            params: Some(params),
        })
        .unwrap();
        let mut frame = Vec::new();
        smcp_proto::sse::encode_event(&json, &mut frame);
        frame
    }

    #[test]
    fn progress_frames_match_the_value_route() {
        let cases = [
            (json!("tok"), 1.0, None, None),
            (json!(7), 2.5, Some(10.0), Some("half\nway \u{e9}\"q\"")),
            (json!(-3), 1e300, Some(f64::INFINITY), None),
            (json!("t"), f64::NAN, None, Some("")),
            (json!("t"), 9_007_199_254_740_993.0, Some(0.0), None),
            (json!("a\"\\\u{1}b"), -0.5, Some(-0.0), Some("\u{2028}\t")),
        ];
        for (token, progress, total, message) in cases {
            let mut params = Map::new();
            params.insert("progressToken".into(), token.clone());
            let number = |v: f64| {
                if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
                    #[allow(clippy::cast_possible_truncation)]
                    Value::from(v as i64)
                } else {
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
                }
            };
            params.insert("progress".into(), number(progress));
            if let Some(total) = total {
                params.insert("total".into(), number(total));
            }
            if let Some(message) = message {
                params.insert("message".into(), Value::String(message.to_owned()));
            }
            let typed = ProgressParams {
                progress_token: &token,
                progress: WireNumber(progress),
                total: total.map(WireNumber),
                message,
            };
            let expected = via_value("notifications/progress", Value::Object(params));
            assert_eq!(
                String::from_utf8(notification_frame(SSE, &typed).unwrap()).unwrap(),
                String::from_utf8(expected.clone()).unwrap(),
                "{token} {progress} {total:?} {message:?}"
            );
            // The same JSON as one line.
            let line = notification_frame(LINE, &typed).unwrap();
            assert_eq!(&line[..line.len() - 1], &expected[6..expected.len() - 2]);
        }
    }

    #[test]
    fn log_frames_match_the_value_route() {
        for logger in [None, Some("db\nlayer")] {
            let data = json!({"b": [1, "two\r\n"], "a": null});
            let mut params = Map::new();
            params.insert("level".into(), json!("warning"));
            if let Some(logger) = logger {
                params.insert("logger".into(), json!(logger));
            }
            params.insert("data".into(), data.clone());
            let typed = LogParams {
                level: LoggingLevel::Warning,
                logger,
                data: &data,
            };
            assert_eq!(
                notification_frame(SSE, &typed).unwrap(),
                via_value("notifications/message", Value::Object(params))
            );
        }
    }
}
