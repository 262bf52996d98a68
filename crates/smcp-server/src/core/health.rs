//! Readiness: health checks registered on the server, and the verdict a probe reads.
//!
//! A [`HealthCheck`] is a name and an async check (a shared store answering, a bus
//! connected). [`Server::readiness`](crate::Server::readiness) runs every registered check
//! at once, each within its own timeout, and is not ready when any fails, times out, or the
//! server is draining ([`Server::shutdown`](crate::Server::shutdown) was called). The HTTP
//! layer serves the verdict at a path of the operator's choice (`/readyz`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// How long a check may take by default before it counts as failed.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest a failure reason may be, in bytes; longer ones are cut.
pub const MAX_REASON_BYTES: usize = 200;

/// Why a health check failed. The reason is shown to whoever reads the readiness endpoint:
/// it must name what is wrong without secrets (no URLs with credentials, no keys).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unhealthy {
    reason: String,
}

impl Unhealthy {
    /// A failure with this reason (cut to [`MAX_REASON_BYTES`], at a character boundary).
    pub fn new(reason: impl Into<String>) -> Self {
        let mut reason = reason.into();
        if reason.len() > MAX_REASON_BYTES {
            let mut end = MAX_REASON_BYTES;
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason.truncate(end);
        }
        Self { reason }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// The future a [`HealthCheck`] returns.
pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Unhealthy>> + Send + 'a>>;

/// One dependency the server needs to serve: a shared store, a bus, an object store.
///
/// # Examples
///
/// ```
/// use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};
///
/// #[derive(Debug)]
/// struct Disk;
///
/// impl HealthCheck for Disk {
///     fn name(&self) -> &str {
///         "disk"
///     }
///     fn check(&self) -> CheckFuture<'_> {
///         Box::pin(async {
///             std::fs::metadata("/").map(|_| ()).map_err(|e| Unhealthy::new(e.kind().to_string()))
///         })
///     }
/// }
///
/// let server = smcp_server::Server::builder("demo", "1.0.0").health_check(Disk).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub trait HealthCheck: Send + Sync + fmt::Debug + 'static {
    /// The check's name, shown in the readiness answer (`"redis"`, `"files-store"`).
    fn name(&self) -> &str;
    /// Checks the dependency once.
    fn check(&self) -> CheckFuture<'_>;
    /// How long [`HealthCheck::check`] may take before it counts as failed.
    fn timeout(&self) -> Duration {
        DEFAULT_CHECK_TIMEOUT
    }
}

/// The verdict of one readiness probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// Every check passed and the server is not draining.
    Ready,
    /// The server is draining: it finishes what it has and takes nothing new.
    Draining,
    /// These checks failed: each name with its reason.
    Failing(Vec<(String, Unhealthy)>),
}

impl Readiness {
    /// Whether a load balancer should send requests here.
    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready)
    }

    /// The JSON body a probe answers with: `{"status":"ready"}`, `{"status":"draining"}` or
    /// `{"status":"failing","failing":[{"check":…,"reason":…}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Ready => serde_json::json!({"status": "ready"}),
            Self::Draining => serde_json::json!({"status": "draining"}),
            Self::Failing(failing) => serde_json::json!({
                "status": "failing",
                "failing": failing
                    .iter()
                    .map(|(name, why)| serde_json::json!({"check": name, "reason": why.reason()}))
                    .collect::<Vec<_>>(),
            }),
        }
    }
}

/// Runs every check at once, each within its timeout.
pub(crate) async fn run_checks(checks: &[std::sync::Arc<dyn HealthCheck>]) -> Readiness {
    let runs = checks.iter().map(|check| async move {
        let timeout = check.timeout();
        match tokio::time::timeout(timeout, check.check()).await {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some((check.name().to_owned(), why)),
            Err(_) => Some((
                check.name().to_owned(),
                Unhealthy::new(format!("no answer within {} ms", timeout.as_millis())),
            )),
        }
    });
    let failing: Vec<_> = futures_util::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    if failing.is_empty() {
        Readiness::Ready
    } else {
        Readiness::Failing(failing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_reasons_are_cut_at_a_character_boundary() {
        let why = Unhealthy::new("é".repeat(150));
        assert!(why.reason().len() <= MAX_REASON_BYTES);
        assert!(why.reason().chars().all(|c| c == 'é'));
    }
}
