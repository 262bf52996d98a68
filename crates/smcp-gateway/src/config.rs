//! The gateway's configuration: a TOML file of `[gateway]` settings and `[[upstream]]` tables,
//! read once at start and checked before anything is spawned or connected.
//!
//! ```toml
//! [gateway]
//! separator = "_"          # prefix + separator + tool name
//! held_call_ttl = "10m"    # how long a call waiting for the client's answer is kept
//!
//! [[upstream]]
//! name = "files"
//! command = ["mcp-server-filesystem", "/srv/data"]   # stdio: spawned, restarted with backoff
//! env_from = ["HOME"]
//! tools.deny = ["write_file"]
//!
//! [[upstream]]
//! name = "search"
//! prefix = "web"
//! url = "https://search.internal/mcp"                # HTTP of any era, negotiated
//! bearer_token_env = "SEARCH_TOKEN"
//! timeout = "30s"
//! max_concurrency = 8
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// Most upstreams one gateway fronts.
pub const MAX_UPSTREAMS: usize = 256;

/// Longest upstream name or prefix, in bytes.
const MAX_NAME_BYTES: usize = 64;

/// The protocol revisions an upstream can be pinned to (`era = "…"`).
const ERAS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// A configuration that cannot be used, with the file position or the upstream and field at
/// fault. Never echoes a value from the environment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the gateway configuration {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not TOML, or a member of the wrong type or unknown (the message names it and its line).
    #[error("gateway configuration: {0}")]
    Syntax(#[from] toml::de::Error),
    /// A value that parses but cannot be used.
    #[error("gateway configuration, {place}: {message}")]
    Invalid {
        /// `[gateway]` or `upstream "name"`, with the field.
        place: String,
        /// What is wrong.
        message: String,
    },
}

pub(crate) fn invalid(place: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        place: place.into(),
        message: message.into(),
    }
}

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// Settings of the gateway itself.
    #[serde(default)]
    pub gateway: GatewaySettings,
    /// The servers behind it, in the order their items are listed.
    #[serde(rename = "upstream", default)]
    pub upstreams: Vec<UpstreamConfig>,
}

/// `[gateway]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewaySettings {
    /// Between an upstream's prefix and an item's name (`prefix` + `separator` + `name`).
    pub separator: String,
    /// How long a call that is waiting for the client's answer to an upstream's question is
    /// kept before the upstream request is cancelled.
    #[serde(with = "duration")]
    pub held_call_ttl: Duration,
    /// Most calls held for an answer at once, over all upstreams; past it a call that needs
    /// input fails at once.
    pub max_held_calls: usize,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self {
            separator: "_".to_owned(),
            held_call_ttl: Duration::from_secs(600),
            max_held_calls: 1024,
        }
    }
}

/// One `[[upstream]]`: a stdio command or an HTTP URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Its name in logs, metrics, `/readyz` and errors: 1 to 64 of `a-z A-Z 0-9 _ -`.
    pub name: String,
    /// Put before its tool and prompt names (with the separator); defaults to `name`, `""`
    /// for none.
    pub prefix: Option<String>,
    /// stdio: the program and its arguments.
    #[serde(default)]
    pub command: Vec<String>,
    /// stdio: environment variables set for the program (the program starts with an empty
    /// environment but for `PATH` and these).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// stdio: variables passed through from the gateway's own environment; one that is unset
    /// is refused at start.
    #[serde(default)]
    pub env_from: Vec<String>,
    /// stdio: the working directory.
    pub cwd: Option<PathBuf>,
    /// HTTP: the MCP endpoint, of any revision.
    pub url: Option<String>,
    /// HTTP: a variable of the gateway's environment holding the bearer token sent upstream
    /// (the client's own token is never forwarded).
    pub bearer_token_env: Option<String>,
    /// HTTP: the HTTP version spoken to it: `auto` (the default: HTTP/1.1 over `http://`,
    /// HTTP/2 over `https://` when the upstream offers it), `1.1`, or `2` (over `http://`
    /// with prior knowledge, h2c; an upstream that speaks only HTTP/1.1 is then down, named
    /// in `/readyz`). HTTP/2 carries every call in flight on one connection instead of one
    /// connection per call in flight.
    pub http: Option<String>,
    /// Pins the revision spoken to it; by default it is negotiated.
    pub era: Option<String>,
    /// Longest a request to it may take, each round of a call on its own; a call held for the
    /// client's answer (an earlier revision) may take `held_call_ttl` more.
    #[serde(with = "duration", default = "default_timeout")]
    pub timeout: Duration,
    /// Most calls in flight to it at once; more wait their turn within their timeout.
    #[serde(default = "default_concurrency")]
    pub max_concurrency: usize,
    /// Which of its tools are served (by their upstream names).
    #[serde(default)]
    pub tools: ItemFilter,
    /// Which of its prompts are served (by their upstream names).
    #[serde(default)]
    pub prompts: ItemFilter,
    /// Which of its resources and resource templates are served (by URI or URI template,
    /// which the gateway does not rename).
    #[serde(default)]
    pub resources: ItemFilter,
    /// stdio: how a program that exited is started again.
    #[serde(default)]
    pub restart: Restart,
    /// Scopes a client's access token must hold for anything of this upstream: calling its
    /// tools, getting its prompts, reading its resources, completing their arguments. A
    /// token without them gets `403` naming them. Needs the gateway served behind
    /// authorization (smcpd's `--auth-issuer`).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Scopes calls of one tool need on top of `scopes`, by the tool's upstream name.
    #[serde(default)]
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// HTTP at 2026-07-28: each client request goes up with a token of the upstream's own
    /// audience, exchanged for the client's at an authorization server (RFC 8693).
    pub token_exchange: Option<TokenExchangeConfig>,
}

/// `token_exchange`: where and how a client's access token is exchanged for one the upstream
/// accepts. The client's token itself is never sent upstream.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenExchangeConfig {
    /// The authorization server's token endpoint (`https://`, or `http://` on loopback).
    pub token_endpoint: String,
    /// The gateway's client id there (`client_secret_basic`).
    pub client_id: String,
    /// A variable of the gateway's environment holding its client secret.
    pub client_secret_env: String,
    /// The audience asked for (`audience`, and `resource` per RFC 8707); by default the
    /// upstream's URL.
    pub audience: Option<String>,
    /// The scope asked for, space-separated; by default none (the server decides).
    pub scope: Option<String>,
}

fn default_timeout() -> Duration {
    Duration::from_secs(60)
}

fn default_concurrency() -> usize {
    32
}

/// `allow` or `deny` (of `tools`, `prompts`, `resources`): upstream names, before the
/// prefix, or URIs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemFilter {
    /// Only these are served.
    #[serde(default)]
    pub allow: Option<BTreeSet<String>>,
    /// These are not served.
    #[serde(default)]
    pub deny: BTreeSet<String>,
}

impl ItemFilter {
    /// Whether the upstream item `name` is served.
    pub fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.contains(name)) && !self.deny.contains(name)
    }
}

/// `restart`: exponential backoff between starts of a stdio program.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Restart {
    /// The first wait.
    #[serde(with = "duration")]
    pub initial_backoff: Duration,
    /// The longest wait.
    #[serde(with = "duration")]
    pub max_backoff: Duration,
}

impl Default for Restart {
    fn default() -> Self {
        Self {
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on stdin and stdout.
    Stdio,
    /// An HTTP endpoint.
    Http,
}

impl UpstreamConfig {
    /// stdio or HTTP.
    pub fn transport(&self) -> Transport {
        if self.url.is_some() {
            Transport::Http
        } else {
            Transport::Stdio
        }
    }

    /// The prefix its names get, with the separator: `""` when the prefix is empty.
    pub fn qualifier(&self, separator: &str) -> String {
        match self.prefix.as_deref().unwrap_or(&self.name) {
            "" => String::new(),
            prefix => format!("{prefix}{separator}"),
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
        let place = |field: &str| format!("upstream {:?}, {field}", self.name);
        check_name(&self.name).map_err(|m| invalid(place("name"), m))?;
        if let Some(prefix) = &self.prefix
            && !prefix.is_empty()
        {
            check_name(prefix).map_err(|m| invalid(place("prefix"), m))?;
        }
        match (&self.url, self.command.is_empty()) {
            (Some(_), false) => {
                return Err(invalid(
                    place("url"),
                    "give either `command` (stdio) or `url` (HTTP), not both",
                ));
            }
            (None, true) => {
                return Err(invalid(
                    place("command"),
                    "give `command` (stdio) or `url` (HTTP)",
                ));
            }
            (Some(url), true) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid(place("url"), "must be an http:// or https:// URL"));
                }
                for (field, set) in [
                    ("env", !self.env.is_empty()),
                    ("env_from", !self.env_from.is_empty()),
                    ("cwd", self.cwd.is_some()),
                ] {
                    if set {
                        return Err(invalid(place(field), "applies to a stdio upstream only"));
                    }
                }
            }
            (None, false) => {
                for (field, set) in [
                    ("bearer_token_env", self.bearer_token_env.is_some()),
                    ("http", self.http.is_some()),
                ] {
                    if set {
                        return Err(invalid(place(field), "applies to an HTTP upstream only"));
                    }
                }
                if self.command[0].is_empty() {
                    return Err(invalid(place("command"), "the program is empty"));
                }
            }
        }
        if let Some(version) = &self.http
            && let Err(why) = version.parse::<smcp_client::HttpVersion>()
        {
            return Err(invalid(place("http"), why));
        }
        if let Some(era) = &self.era
            && !ERAS.contains(&era.as_str())
        {
            return Err(invalid(
                place("era"),
                format!("{era:?} is not one of {}", ERAS.join(", ")),
            ));
        }
        if self.timeout.is_zero() {
            return Err(invalid(place("timeout"), "must be more than zero"));
        }
        if !(1..=10_000).contains(&self.max_concurrency) {
            return Err(invalid(place("max_concurrency"), "must be 1 to 10000"));
        }
        for (field, filter) in [
            ("tools", &self.tools),
            ("prompts", &self.prompts),
            ("resources", &self.resources),
        ] {
            if filter.allow.is_some() && !filter.deny.is_empty() {
                return Err(invalid(place(field), "give `allow` or `deny`, not both"));
            }
        }
        check_scopes(&self.scopes).map_err(|m| invalid(place("scopes"), m))?;
        if let Some(exchange) = &self.token_exchange {
            if self.url.is_none() {
                return Err(invalid(
                    place("token_exchange"),
                    "applies to an HTTP upstream only",
                ));
            }
            if self.era.as_deref().is_some_and(|e| e != "2026-07-28") {
                return Err(invalid(
                    place("token_exchange"),
                    "needs the upstream at 2026-07-28 (a 2025 session has one token)",
                ));
            }
            let endpoint = &exchange.token_endpoint;
            let loopback = ["http://127.0.0.1", "http://[::1]", "http://localhost"]
                .iter()
                .any(|p| {
                    endpoint
                        .strip_prefix(p)
                        .is_some_and(|r| r.starts_with([':', '/']))
                });
            if !(endpoint.starts_with("https://") || loopback) {
                return Err(invalid(
                    place("token_exchange.token_endpoint"),
                    "must be an https:// URL (http:// only on loopback)",
                ));
            }
            if exchange.client_id.is_empty() || exchange.client_secret_env.is_empty() {
                return Err(invalid(
                    place("token_exchange"),
                    "give client_id and client_secret_env",
                ));
            }
        }
        if self.tool_scopes.len() > MAX_TOOL_SCOPES {
            return Err(invalid(
                place("tool_scopes"),
                format!("at most {MAX_TOOL_SCOPES} tools"),
            ));
        }
        for (tool, scopes) in &self.tool_scopes {
            if scopes.is_empty() {
                return Err(invalid(
                    place(&format!("tool_scopes.{tool}")),
                    "name at least one scope",
                ));
            }
            check_scopes(scopes).map_err(|m| invalid(place(&format!("tool_scopes.{tool}")), m))?;
        }
        if self.restart.initial_backoff.is_zero()
            || self.restart.max_backoff < self.restart.initial_backoff
        {
            return Err(invalid(
                place("restart"),
                "initial_backoff must be more than zero and at most max_backoff",
            ));
        }
        Ok(())
    }
}

/// Most scopes in one list.
const MAX_SCOPES: usize = 32;

/// Most tools `tool_scopes` may name.
const MAX_TOOL_SCOPES: usize = 1024;

/// Each an RFC 6749 §3.3 scope token: printable ASCII but space, `"` and `\`; at most
/// [`MAX_SCOPES`] of them.
fn check_scopes(scopes: &[String]) -> Result<(), String> {
    if scopes.len() > MAX_SCOPES {
        return Err(format!("at most {MAX_SCOPES} scopes"));
    }
    for (i, scope) in scopes.iter().enumerate() {
        let token = |b: u8| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b);
        if scope.is_empty() || scope.len() > 128 || !scope.bytes().all(token) {
            return Err(format!(
                "scope {i} must be 1 to 128 printable ASCII characters without spaces, `\"` or `\\`"
            ));
        }
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(format!("must be 1 to {MAX_NAME_BYTES} bytes"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("may hold only ASCII letters, digits, `_` and `-`".to_owned());
    }
    Ok(())
}

impl GatewayConfig {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses and checks TOML text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text)?;
        config.check()?;
        Ok(config)
    }

    /// Whether an upstream exchanges its clients' tokens (then the gateway must be served
    /// behind authorization that keeps the token for it).
    pub fn exchanges_tokens(&self) -> bool {
        self.upstreams.iter().any(|u| u.token_exchange.is_some())
    }

    /// Every scope the file declares (`scopes` and `tool_scopes` of every upstream), each
    /// once, in order: what the gateway's resource metadata lists as supported.
    pub fn scopes(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for upstream in &self.upstreams {
            let per_tool = upstream.tool_scopes.values().flatten();
            for scope in upstream.scopes.iter().chain(per_tool) {
                if !all.contains(scope) {
                    all.push(scope.clone());
                }
            }
        }
        all
    }

    /// Checks what the types cannot: names, one transport each, bounds, unique names and
    /// prefixes.
    pub fn check(&self) -> Result<(), ConfigError> {
        let separator = &self.gateway.separator;
        if separator.len() > 8
            || !separator
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-./".contains(&b))
        {
            return Err(invalid(
                "[gateway] separator",
                "at most 8 of ASCII letters, digits, `_`, `-`, `.`, `/`",
            ));
        }
        if self.gateway.held_call_ttl.is_zero() {
            return Err(invalid("[gateway] held_call_ttl", "must be more than zero"));
        }
        if !(1..=1_000_000).contains(&self.gateway.max_held_calls) {
            return Err(invalid("[gateway] max_held_calls", "must be 1 to 1000000"));
        }
        if self.upstreams.is_empty() {
            return Err(invalid("[[upstream]]", "at least one upstream is needed"));
        }
        if self.upstreams.len() > MAX_UPSTREAMS {
            return Err(invalid(
                "[[upstream]]",
                format!("at most {MAX_UPSTREAMS} upstreams"),
            ));
        }
        let mut names = BTreeSet::new();
        let mut qualifiers = BTreeMap::new();
        for upstream in &self.upstreams {
            upstream.check()?;
            if !names.insert(upstream.name.as_str()) {
                return Err(invalid(
                    format!("upstream {:?}, name", upstream.name),
                    "another upstream has this name",
                ));
            }
            let qualifier = upstream.qualifier(separator);
            if qualifier.is_empty() {
                // Unprefixed upstreams share the bare namespace; their names are checked
                // against each other when they are listed.
                continue;
            }
            if let Some(other) = qualifiers.insert(qualifier.clone(), upstream.name.as_str()) {
                return Err(invalid(
                    format!("upstream {:?}, prefix", upstream.name),
                    format!("upstream {other:?} has the same prefix {qualifier:?}"),
                ));
            }
        }
        Ok(())
    }
}

/// `"250ms"`, `"30s"`, `"10m"`, `"1h"`.
mod duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(D::Error::custom)
    }

    pub(super) fn parse(text: &str) -> Result<Duration, String> {
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(|| format!("{text:?} has no unit (ms, s, m or h)"))?;
        let (number, unit) = text.split_at(split);
        let n: u64 = number
            .parse()
            .map_err(|_| format!("{text:?} does not start with a whole number"))?;
        let millis = match unit {
            "ms" => Some(n),
            "s" => n.checked_mul(1_000),
            "m" => n.checked_mul(60_000),
            "h" => n.checked_mul(3_600_000),
            _ => return Err(format!("{text:?}: the unit must be ms, s, m or h")),
        };
        millis
            .filter(|&ms| ms <= 7 * 24 * 3_600_000)
            .map(Duration::from_millis)
            .ok_or_else(|| format!("{text:?} is longer than a week"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        match GatewayConfig::parse(text) {
            Ok(config) => panic!("accepted: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_full_file_reads_with_its_defaults() {
        let config = GatewayConfig::parse(
            r#"
            [gateway]
            held_call_ttl = "2m"

            [[upstream]]
            name = "files"
            command = ["mcp-fs", "/srv"]
            env = { MODE = "ro" }
            env_from = ["HOME"]
            tools.deny = ["write"]
            scopes = ["files", "mcp"]
            tool_scopes = { read = ["files:read"], delete = ["files:admin", "mcp"] }

            [[upstream]]
            name = "search"
            prefix = ""
            url = "https://search.internal/mcp"
            era = "2025-06-18"
            timeout = "1500ms"
            max_concurrency = 4
            "#,
        )
        .unwrap();
        assert_eq!(config.gateway.separator, "_");
        assert_eq!(config.gateway.held_call_ttl, Duration::from_secs(120));
        let [files, search] = &config.upstreams[..] else {
            panic!("two upstreams: {config:?}");
        };
        assert_eq!(files.transport(), Transport::Stdio);
        assert_eq!(files.qualifier("_"), "files_");
        assert_eq!(files.timeout, Duration::from_secs(60));
        assert!(files.tools.admits("read") && !files.tools.admits("write"));
        assert_eq!(search.transport(), Transport::Http);
        assert_eq!(search.qualifier("_"), "");
        assert_eq!(search.timeout, Duration::from_millis(1500));
        assert_eq!(search.max_concurrency, 4);
        assert!(search.scopes.is_empty() && search.tool_scopes.is_empty());
        assert_eq!(
            config.scopes(),
            ["files", "mcp", "files:admin", "files:read"]
        );
    }

    #[test]
    fn each_mistake_is_named_with_its_upstream_and_field() {
        let cases = [
            ("", "at least one upstream"),
            (
                "[[upstream]]\nname = \"a\"\n",
                "upstream \"a\", command: give `command` (stdio) or `url` (HTTP)",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n",
                "not both",
            ),
            (
                "[[upstream]]\nname = \"a b\"\ncommand = [\"x\"]\n",
                "upstream \"a b\", name: may hold only",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"ftp://h\"\n",
                "upstream \"a\", url: must be an http",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"http://h\"\ncwd = \"/\"\n",
                "upstream \"a\", cwd: applies to a stdio upstream only",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nhttp = \"2\"\n",
                "upstream \"a\", http: applies to an HTTP upstream only",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"http://h\"\nhttp = \"3\"\n",
                "upstream \"a\", http: unknown HTTP version \"3\" (expected auto, 1.1 or 2)",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nera = \"2024-01-01\"\n",
                "upstream \"a\", era: \"2024-01-01\" is not one of",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ntimeout = \"5 parsecs\"\n",
                "the unit must be ms, s, m or h",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ntools = { allow = [\"p\"], deny = [\"q\"] }\n",
                "upstream \"a\", tools: give `allow` or `deny`",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\n[[upstream]]\nname = \"a\"\nurl = \"http://h\"\n",
                "another upstream has this name",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\n[[upstream]]\nname = \"b\"\nprefix = \"a\"\nurl = \"http://h\"\n",
                "upstream \"b\", prefix: upstream \"a\" has the same prefix \"a_\"",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nmax_concurrency = 0\n",
                "max_concurrency: must be 1 to 10000",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nscopes = [\"a b\"]\n",
                "upstream \"a\", scopes: scope 0 must be 1 to 128 printable ASCII",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ntool_scopes = { t = [] }\n",
                "upstream \"a\", tool_scopes.t: name at least one scope",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ntool_scopes = { t = [\"ok\", \"q\\\"\"] }\n",
                "upstream \"a\", tool_scopes.t: scope 1 must be",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\n[upstream.token_exchange]\ntoken_endpoint = \"https://as/token\"\nclient_id = \"g\"\nclient_secret_env = \"S\"\n",
                "upstream \"a\", token_exchange: applies to an HTTP upstream only",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"http://h/mcp\"\nera = \"2025-11-25\"\n[upstream.token_exchange]\ntoken_endpoint = \"https://as/token\"\nclient_id = \"g\"\nclient_secret_env = \"S\"\n",
                "upstream \"a\", token_exchange: needs the upstream at 2026-07-28",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"http://h/mcp\"\n[upstream.token_exchange]\ntoken_endpoint = \"http://as.example/token\"\nclient_id = \"g\"\nclient_secret_env = \"S\"\n",
                "upstream \"a\", token_exchange.token_endpoint: must be an https:// URL",
            ),
            (
                "[[upstream]]\nname = \"a\"\nurl = \"http://h/mcp\"\n[upstream.token_exchange]\ntoken_endpoint = \"http://127.0.0.1.evil/token\"\nclient_id = \"g\"\nclient_secret_env = \"S\"\n",
                "token_exchange.token_endpoint: must be an https:// URL",
            ),
            (
                "[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nbogus = 1\n",
                "unknown field `bogus`",
            ),
        ];
        for (text, expected) in cases {
            let error = error_of(text);
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn durations_read_in_their_units_and_are_bounded() {
        assert_eq!(duration::parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration::parse("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(duration::parse("2h"), Ok(Duration::from_secs(7200)));
        for bad in [
            "",
            "10",
            "s",
            "1.5s",
            "-1s",
            "200h",
            "99999999999999999999s",
        ] {
            assert!(duration::parse(bad).is_err(), "{bad:?}");
        }
    }
}
