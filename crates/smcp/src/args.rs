//! `--arg k=v` parsing: values are coerced by the tool's `inputSchema` property type, so
//! `--arg a=1` sends the number 1 to an `integer`/`number` parameter and the string "1" to a
//! `string` one.

use serde_json::{Map, Value};

use crate::errors::Usage;

/// A usage error (exit code 2).
fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(Usage(message))
}

/// Splits `k=v`.
pub(crate) fn split(arg: &str) -> anyhow::Result<(&str, &str)> {
    arg.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| usage(format!("--arg expects NAME=VALUE, got {arg:?}")))
}

/// The declared `type` of property `name` in `schema`, if any.
fn declared_type<'a>(schema: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    schema.get("properties")?.get(name)?.get("type")?.as_str()
}

/// Coerces `raw` for property `name`.
pub(crate) fn coerce(schema: &Map<String, Value>, name: &str, raw: &str) -> anyhow::Result<Value> {
    Ok(match declared_type(schema, name) {
        Some("string") => Value::String(raw.to_owned()),
        Some("integer") => Value::from(
            raw.trim()
                .parse::<i64>()
                .map_err(|e| usage(format!("--arg {name}: {raw:?} is not an integer ({e})")))?,
        ),
        Some("number") => {
            let n: f64 = raw
                .trim()
                .parse()
                .map_err(|e| usage(format!("--arg {name}: {raw:?} is not a number ({e})")))?;
            // Whole numbers go out as integers (`1`, not `1.0`).
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                #[allow(clippy::cast_possible_truncation)]
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| usage(format!("--arg {name}: {raw:?} is not a finite number")))?
            }
        }
        Some("boolean") => match raw.trim() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => {
                return Err(usage(format!(
                    "--arg {name}: {raw:?} is not a boolean (true/false)"
                )));
            }
        },
        Some("object" | "array") => serde_json::from_str(raw)
            .map_err(|e| usage(json_error(&format!("--arg {name}"), raw, &e)))?,
        // Unknown or untyped: JSON if it parses, else the plain string.
        _ => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
    })
}

/// "`what` is not valid JSON: <serde's reason> at line L column C", then the offending line
/// and a caret under the column (lines longer than 120 characters are cut around it).
pub(crate) fn json_error(what: &str, text: &str, e: &serde_json::Error) -> String {
    let (line, column) = (e.line(), e.column());
    let reason = e.to_string();
    // serde_json's message already ends with "at line L column C".
    let mut out = format!("{what} is not valid JSON: {reason}");
    if line == 0 {
        return out;
    }
    let Some(src) = text.lines().nth(line - 1) else {
        return out;
    };
    let chars: Vec<char> = src.chars().collect();
    // serde's column is 1-based and points at the offending character (0 at the very end).
    let col = column.max(1).min(chars.len() + 1) - 1;
    let start = col.saturating_sub(80);
    let end = (start + 120).min(chars.len());
    let shown: String = chars[start..end].iter().collect();
    let prefix = if start > 0 { "…" } else { "" };
    out.push_str(&format!(
        "\n    {prefix}{shown}\n    {}{}^",
        " ".repeat(prefix.chars().count()),
        " ".repeat(col - start)
    ));
    out
}

/// Builds tool arguments from `--json-args` and `--arg`s (which override).
pub(crate) fn tool_arguments(
    schema: &Map<String, Value>,
    json_args: Option<&str>,
    args: &[String],
) -> anyhow::Result<Value> {
    let mut out = match json_args {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text)
            .map_err(|e| usage(json_error("--json-args", text, &e)))?
        {
            Value::Object(m) => m,
            other => {
                return Err(usage(format!(
                    "--json-args must be a JSON object, got {other}"
                )));
            }
        },
    };
    for arg in args {
        let (k, v) = split(arg)?;
        out.insert(k.to_owned(), coerce(schema, k, v)?);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coerces_by_schema_type() {
        let schema = json!({"properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "o": {"type": "object"}}});
        let schema = schema.as_object().unwrap().clone();
        let args: Vec<String> = [
            "i=2",
            "n=1.5",
            "b=true",
            "s=1",
            "o={\"x\":1}",
            "u=7",
            "w=hi",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let v = tool_arguments(&schema, Some(r#"{"s": "old", "keep": 1}"#), &args).unwrap();
        assert_eq!(
            v,
            json!({"s": "1", "keep": 1, "i": 2, "n": 1.5, "b": true, "o": {"x": 1}, "u": 7, "w": "hi"})
        );
        assert!(tool_arguments(&schema, None, &["i=x".to_owned()]).is_err());
        assert!(tool_arguments(&schema, None, &["novalue".to_owned()]).is_err());
        assert_eq!(coerce(&schema, "n", "3").unwrap(), json!(3));
    }

    #[test]
    fn invalid_json_args_point_at_the_error() {
        let err = tool_arguments(&Map::new(), Some(r#"{"a": 1 "b": 2}"#), &[]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 1 column 9"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], r#"    {"a": 1 "b": 2}"#);
        assert_eq!(lines[2], "            ^", "{text}");
        assert!(err.downcast_ref::<Usage>().is_some());
        let err =
            tool_arguments(&Map::new(), Some("{\n  \"a\": 1,\n  \"b\": x\n}"), &[]).unwrap_err();
        let text = err.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("at line 3 column 8"), "{text}");
        assert_eq!(lines[1], r#"      "b": x"#, "{text}");
        assert_eq!(lines[2], "           ^", "{text}");
    }
}
