//! [`BusError`]: why a bus refused an operation.

/// Why the bus refused an operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BusError {
    /// The bus was closed; nothing more is delivered.
    #[error("the change bus is closed")]
    Closed,
    /// A networked bus could not reach its backend.
    #[error("the change bus is unavailable: {0}")]
    Unavailable(String),
}
