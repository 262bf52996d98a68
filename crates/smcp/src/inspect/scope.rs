//! Which of the page's calls the code running now belongs to: a call's future runs inside
//! [`CALL`], so the wire entries and questions it causes are tagged with it.

tokio::task_local! {
    /// The id of the page's call being run.
    pub(crate) static CALL: String;
}

/// The call the current task runs for, if any.
pub(crate) fn current() -> Option<String> {
    CALL.try_with(Clone::clone).ok()
}
