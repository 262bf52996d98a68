//! `--arg k=v` parsing: values are coerced by the tool's `inputSchema` property type, so
//! `--arg a=1` sends the number 1 to an `integer`/`number` parameter and the string "1" to a
//! `string` one.

use anyhow::{Context as _, anyhow, bail};
use serde_json::{Map, Value};

/// Splits `k=v`.
pub(crate) fn split(arg: &str) -> anyhow::Result<(&str, &str)> {
    arg.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| anyhow!("--arg expects NAME=VALUE, got {arg:?}"))
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
                .with_context(|| format!("--arg {name}: {raw:?} is not an integer"))?,
        ),
        Some("number") => {
            let n: f64 = raw
                .trim()
                .parse()
                .with_context(|| format!("--arg {name}: {raw:?} is not a number"))?;
            // Whole numbers go out as integers (`1`, not `1.0`).
            if n.fract() == 0.0 && n.abs() < 9.0e15 {
                #[allow(clippy::cast_possible_truncation)]
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| anyhow!("--arg {name}: {raw:?} is not a finite number"))?
            }
        }
        Some("boolean") => match raw.trim() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => bail!("--arg {name}: {raw:?} is not a boolean (true/false)"),
        },
        Some("object" | "array") => serde_json::from_str(raw)
            .with_context(|| format!("--arg {name}: {raw:?} is not valid JSON"))?,
        // Unknown or untyped: JSON if it parses, else the plain string.
        _ => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
    })
}

/// Builds tool arguments from `--json-args` and `--arg`s (which override).
pub(crate) fn tool_arguments(
    schema: &Map<String, Value>,
    json_args: Option<&str>,
    args: &[String],
) -> anyhow::Result<Value> {
    let mut out = match json_args {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text).context("--json-args is not valid JSON")? {
            Value::Object(m) => m,
            other => bail!("--json-args must be a JSON object, got {other}"),
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
}
