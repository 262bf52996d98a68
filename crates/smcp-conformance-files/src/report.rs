//! The official suite's output shape: per-scenario `checks.json`, a `summary.json`, the
//! expected-failures (baseline) file and the exit code.
//!
//! Layout written under the output directory `DIR`:
//! `DIR/<scenario>/checks.json` (array of [`Check`]) and `DIR/summary.json` ([`Summary`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::sep::Cite;

/// Status of one check, spelled as the official suite spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// The implementation did what the cited sentence requires.
    Success,
    /// A MUST (or the fixture contract) was violated.
    Failure,
    /// A SHOULD was not followed.
    Warning,
    /// The check could not be exercised (a precondition failed or the behaviour is optional).
    Skipped,
}

impl Status {
    /// FAILURE and WARNING are failures under an expected-failures file (as in the official suite).
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Failure | Self::Warning)
    }
}

pub use crate::spec_reference::SpecReference;

/// One row of `checks.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// Stable check id (`sep2631-…`); may repeat within a scenario (one per case).
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// What the check verifies.
    pub description: String,
    /// Outcome.
    pub status: Status,
    /// RFC 3339 UTC time the check was recorded.
    pub timestamp: String,
    /// Why it failed / was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The SEP sentences the check tests.
    pub spec_references: Vec<SpecReference>,
    /// Free-form evidence (requests and responses, trimmed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// Collects the checks of one scenario.
#[derive(Debug, Default)]
pub struct Recorder {
    checks: Vec<Check>,
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a check. `problem = None` means SUCCESS, otherwise `fail_as` with the message.
    pub fn record(&mut self, id: &str, cite: &Cite, problem: Option<String>, fail_as: Status) {
        let (status, error_message) = match problem {
            None => (Status::Success, None),
            Some(m) => (fail_as, Some(m)),
        };
        self.push(id, cite, status, error_message, None);
    }

    /// Records a check with an explicit status, message and details.
    pub fn push(
        &mut self,
        id: &str,
        cite: &Cite,
        status: Status,
        error_message: Option<String>,
        details: Option<serde_json::Value>,
    ) {
        self.checks.push(Check {
            id: id.to_owned(),
            name: cite.name.to_owned(),
            description: cite.description.to_owned(),
            status,
            timestamp: rfc3339_now(),
            error_message,
            spec_references: vec![cite.reference()],
            details,
        });
    }

    /// MUST-level check: SUCCESS when `problem` is `None`, FAILURE otherwise.
    pub fn must(&mut self, id: &str, cite: &Cite, problem: Option<String>) {
        self.record(id, cite, problem, Status::Failure);
    }

    /// SHOULD-level check: SUCCESS when `problem` is `None`, WARNING otherwise.
    pub fn should(&mut self, id: &str, cite: &Cite, problem: Option<String>) {
        self.record(id, cite, problem, Status::Warning);
    }

    /// Records a SKIPPED check with the reason.
    pub fn skip(&mut self, id: &str, cite: &Cite, why: impl Into<String>) {
        self.push(id, cite, Status::Skipped, Some(why.into()), None);
    }

    /// The checks recorded so far.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// Consumes the recorder.
    pub fn into_checks(self) -> Vec<Check> {
        self.checks
    }
}

/// Results of one leg: scenario name → checks.
pub type LegResults = BTreeMap<String, Vec<Check>>;

/// Counts per status for one scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioSummary {
    /// Number of SUCCESS checks.
    pub success: usize,
    /// Number of FAILURE checks.
    pub failure: usize,
    /// Number of WARNING checks.
    pub warning: usize,
    /// Number of SKIPPED checks.
    pub skipped: usize,
    /// Ids of FAILURE/WARNING checks.
    pub failed: Vec<String>,
}

/// `summary.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// `server` or `client`.
    pub leg: String,
    /// Per scenario counts.
    pub scenarios: BTreeMap<String, ScenarioSummary>,
    /// `scenario:check-id` failures not covered by the baseline.
    pub unexpected_failures: Vec<String>,
    /// Baseline entries that no longer fail.
    pub stale_baseline: Vec<String>,
    /// Baseline entries that did fail, as expected.
    pub expected_failures: Vec<String>,
    /// True when the leg passes (no unexpected failure, no stale entry).
    pub ok: bool,
}

/// The expected-failures file, same format as `conformance/baseline.yml`:
/// `server:` / `client:` lists of `scenario` or `scenario:check-id`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Entries per leg.
    pub legs: BTreeMap<String, Vec<String>>,
}

/// Errors reading the baseline or writing results.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The baseline does not follow the format.
    #[error("expected-failures file line {line}: {message}")]
    Baseline {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// I/O.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// JSON encoding.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

impl Baseline {
    /// Parses the small YAML subset the official suite's baseline uses: top-level `server:` and
    /// `client:` keys, each followed by `- entry` lines or an inline `[]`. Comments are ignored.
    pub fn parse(text: &str) -> Result<Self, ReportError> {
        let mut legs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut current: Option<String> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split(" #").next().unwrap_or("").trim_end();
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let err = |message: &str| ReportError::Baseline {
                line: i + 1,
                message: message.to_owned(),
            };
            if !line.starts_with(' ') && !line.starts_with('-') {
                let (key, rest) = trimmed
                    .split_once(':')
                    .ok_or_else(|| err("expected `server:` or `client:`"))?;
                if key != "server" && key != "client" {
                    return Err(err("only `server` and `client` keys are allowed"));
                }
                let rest = rest.trim();
                if !(rest.is_empty() || rest == "[]") {
                    return Err(err("a leg key takes a list on the following lines or `[]`"));
                }
                legs.entry(key.to_owned()).or_default();
                current = Some(key.to_owned());
                continue;
            }
            let entry = trimmed
                .strip_prefix("- ")
                .ok_or_else(|| err("expected `- entry`"))?
                .trim();
            if entry.contains(": ") {
                return Err(err(
                    "`a: b` is a mapping; write `scenario:check-id` without a space",
                ));
            }
            let leg = current
                .as_ref()
                .ok_or_else(|| err("entry before `server:`/`client:`"))?;
            legs.entry(leg.clone()).or_default().push(entry.to_owned());
        }
        Ok(Self { legs })
    }

    /// The entries of one leg.
    pub fn entries(&self, leg: &str) -> &[String] {
        self.legs.get(leg).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Scores a leg against the baseline (official semantics: FAILURE or WARNING not in the baseline
/// is unexpected; a baseline entry whose scenario/check has no FAILURE/WARNING is stale unless
/// the check is absent or SKIPPED).
pub fn summarize(leg: &str, results: &LegResults, baseline: &Baseline) -> Summary {
    let entries = baseline.entries(leg);
    let mut summary = Summary {
        leg: leg.to_owned(),
        ..Summary::default()
    };
    for (scenario, checks) in results {
        let mut s = ScenarioSummary::default();
        for c in checks {
            match c.status {
                Status::Success => s.success += 1,
                Status::Failure => s.failure += 1,
                Status::Warning => s.warning += 1,
                Status::Skipped => s.skipped += 1,
            }
            if c.status.is_failure() && !s.failed.contains(&c.id) {
                s.failed.push(c.id.clone());
            }
        }
        for id in &s.failed {
            let key = format!("{scenario}:{id}");
            if entries.iter().any(|e| e == scenario || *e == key) {
                summary.expected_failures.push(key);
            } else {
                summary.unexpected_failures.push(key);
            }
        }
        summary.scenarios.insert(scenario.clone(), s);
    }
    for entry in entries {
        let (scenario, check) = match entry.split_once(':') {
            Some((s, c)) => (s, Some(c)),
            None => (entry.as_str(), None),
        };
        let Some(checks) = results.get(scenario) else {
            continue;
        };
        let stale = match check {
            None => !checks.iter().any(|c| c.status.is_failure()),
            Some(id) => {
                let rows: Vec<_> = checks.iter().filter(|c| c.id == id).collect();
                !rows.is_empty() && rows.iter().all(|c| c.status == Status::Success)
            }
        };
        if stale {
            summary.stale_baseline.push(entry.clone());
        }
    }
    summary.ok = summary.unexpected_failures.is_empty() && summary.stale_baseline.is_empty();
    summary
}

/// Writes `DIR/<scenario>/checks.json` for every scenario and `DIR/summary.json`.
pub fn write_results(
    dir: &Path,
    results: &LegResults,
    summary: &Summary,
) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir)?;
    for (scenario, checks) in results {
        let sdir = dir.join(scenario);
        std::fs::create_dir_all(&sdir)?;
        std::fs::write(sdir.join("checks.json"), serde_json::to_vec_pretty(checks)?)?;
    }
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_vec_pretty(summary)?,
    )?;
    Ok(())
}

/// One line per scenario plus totals, for the terminal.
pub fn render(summary: &Summary) -> String {
    let mut out = format!("=== SEP-2631 {} leg ===\n", summary.leg);
    for (name, s) in &summary.scenarios {
        let mark = if s.failed.is_empty() { '✓' } else { '✗' };
        out.push_str(&format!(
            "{mark} {name}: {} passed, {} failed, {} warnings, {} skipped{}\n",
            s.success,
            s.failure,
            s.warning,
            s.skipped,
            if s.failed.is_empty() {
                String::new()
            } else {
                format!(" [{}]", s.failed.join(", "))
            }
        ));
    }
    let passed: usize = summary.scenarios.values().map(|s| s.success).sum();
    let failed: usize = summary
        .scenarios
        .values()
        .map(|s| s.failure + s.warning)
        .sum();
    out.push_str(&format!("{passed} passed, {failed} failed\n"));
    for e in &summary.unexpected_failures {
        out.push_str(&format!("unexpected failure: {e}\n"));
    }
    for e in &summary.stale_baseline {
        out.push_str(&format!(
            "stale expected-failures entry (now passes): {e}\n"
        ));
    }
    out.push_str(if summary.ok {
        "result: OK\n"
    } else {
        "result: FAILED\n"
    });
    out
}

/// Current time as RFC 3339 UTC with millisecond precision.
pub fn rfc3339_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (y, mo, da) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{mo:02}-{da:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        d.subsec_millis()
    )
}

pub use smcp_proto::time::{civil_from_days, parse_rfc3339, rfc3339 as rfc3339_at};

/// Unix seconds now.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_parses_official_format() {
        let b = Baseline::parse("# c\nserver: []\nclient:\n  - a\n  - b:c-d  # why\n").unwrap();
        assert!(b.entries("server").is_empty());
        assert_eq!(b.entries("client"), ["a", "b:c-d"]);
        assert!(Baseline::parse("server:\n  - a: b\n").is_err());
        assert!(Baseline::parse("other:\n").is_err());
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert!(parse_rfc3339(&rfc3339_now()).is_some());
        assert_eq!(
            parse_rfc3339(&rfc3339_at(1_776_709_800)),
            Some(1_776_709_800)
        );
    }
}
