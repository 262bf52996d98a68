//! [`Outcome`]: how one run of the client under test ended.

/// How one run of the client under test ended: its exit code, and what went wrong if it did.
pub(crate) struct Outcome {
    /// The exit code, if the client exited.
    pub(crate) exit: Option<i32>,
    /// Why the run did not end normally, or nothing.
    pub(crate) note: String,
}
