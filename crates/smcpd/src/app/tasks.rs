//! SEP-2663 tasks (feature `tasks`): the `--tasks-*` flags and `--no-tasks`. Without the
//! feature, no flags and nothing to configure.

#[cfg(feature = "tasks")]
use std::time::Duration;

/// The SEP-2663 flags.
#[cfg(feature = "tasks")]
#[derive(Debug, clap::Args)]
pub(crate) struct TasksArgs {
    /// Do not serve SEP-2663 tasks: neither the extension nor the tool `long_job`.
    #[arg(long, conflicts_with_all = ["tasks_ttl", "tasks_max", "tasks_poll_interval", "tasks_immediate_window", "task_lease"])]
    no_tasks: bool,
    /// How long a task, and then its result, is kept from its creation (`ttlMs`); a task
    /// still running then is stopped. From 1s to 7 days (10080m).
    #[arg(long, value_name = "DURATION", default_value = "60m", value_parser = tasks_ttl)]
    tasks_ttl: Duration,
    /// Most tasks kept at once (running or finished within their TTL; with --redis, across
    /// all instances); beyond it a call that would become a task is refused (−32603, "the
    /// server is busy"). From 1 to 1000000.
    #[arg(
        long,
        value_name = "N",
        default_value_t = smcp_tasks::DEFAULT_MAX_TASKS as u64,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000)
    )]
    tasks_max: u64,
    /// The polling interval suggested to clients (`pollIntervalMs`). From 10ms to 5m, and
    /// not above --tasks-ttl.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = tasks_poll_interval)]
    tasks_poll_interval: Duration,
    /// How long a task-capable call runs inline before it becomes a task: one that finishes
    /// (or asks for input) within it is answered as a plain call. 0 makes every such call a
    /// task at once. From 0 to 60s.
    #[arg(long, value_name = "DURATION", default_value = "250ms", value_parser = tasks_immediate_window)]
    tasks_immediate_window: Duration,
    /// With --redis (tasks shared by the instances): the lease of a task this instance runs,
    /// renewed every third of it. When the instance dies, another one fails the task
    /// (−32603, "Worker lost: …") once the lease lapsed, within about 1⅓ leases. A bare
    /// number is seconds. From 500ms to 10m.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = task_lease)]
    task_lease: Duration,
}

#[cfg(feature = "tasks")]
fn tasks_ttl(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(
        text,
        Duration::from_secs(1),
        Duration::from_secs(7 * 86_400),
    )
}

#[cfg(feature = "tasks")]
fn task_lease(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(text, Duration::from_millis(500), Duration::from_secs(600))
}

#[cfg(feature = "tasks")]
fn tasks_poll_interval(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(text, Duration::from_millis(10), Duration::from_secs(300))
}

#[cfg(feature = "tasks")]
fn tasks_immediate_window(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(text, Duration::ZERO, Duration::from_secs(60))
}

#[cfg(feature = "tasks")]
impl TasksArgs {
    /// Turns the tasks extension on in `config`, unless `--no-tasks`: its tasks in the store
    /// `shared` gives (Redis, with `--redis`), in this process otherwise.
    pub(crate) fn configure(
        &self,
        config: &mut smcpd::DemoConfig,
        shared: &super::redis::Shared,
    ) -> anyhow::Result<()> {
        config.tasks = self.extension(shared)?;
        Ok(())
    }

    /// The tasks extension, unless `--no-tasks`.
    fn extension(
        &self,
        shared: &super::redis::Shared,
    ) -> anyhow::Result<Option<smcp_tasks::TasksExtension>> {
        if self.no_tasks {
            return Ok(None);
        }
        if self.tasks_poll_interval > self.tasks_ttl {
            anyhow::bail!(
                "--tasks-poll-interval ({}) must not exceed --tasks-ttl ({}): a task would \
                 expire before its first poll",
                smcpd::show_duration(self.tasks_poll_interval),
                smcpd::show_duration(self.tasks_ttl)
            );
        }
        let max_tasks = usize::try_from(self.tasks_max)
            .map_err(|_| anyhow::anyhow!("--tasks-max {} is too large here", self.tasks_max))?;
        let mut builder = smcp_tasks::TasksExtension::builder()
            .ttl(Some(self.tasks_ttl))
            .max_tasks(max_tasks)
            .poll_interval(self.tasks_poll_interval)
            .immediate_window(self.tasks_immediate_window)
            .lease(self.task_lease);
        if let Some(store) = shared.task_store(max_tasks) {
            tracing::info!(
                lease = %smcpd::show_duration(self.task_lease),
                "tasks shared through Redis"
            );
            builder = builder.store(store);
        }
        Ok(Some(builder.build()))
    }
}

/// Once the server is built: the lease keeper of a shared task store starts sweeping now,
/// before the first task request.
#[cfg(feature = "tasks")]
pub(crate) fn attach(tasks: Option<&smcp_tasks::TasksExtension>, server: &smcp_server::Server) {
    if let Some(tasks) = tasks {
        tasks.attach(server);
    }
}

/// Without the feature: no flags.
#[cfg(not(feature = "tasks"))]
#[derive(Debug, clap::Args)]
pub(crate) struct TasksArgs {}

#[cfg(not(feature = "tasks"))]
impl TasksArgs {
    /// Nothing to configure.
    pub(crate) fn configure(
        &self,
        _config: &mut smcpd::DemoConfig,
        _shared: &super::redis::Shared,
    ) -> anyhow::Result<()> {
        Ok(())
    }
}
