//! The per-request probe that metrics fill in: the method label and the JSON-RPC error code the
//! layers below note while a measured request runs. A leaf: responses note into it, and the
//! observer that reports it reads it back.

use std::cell::Cell;

tokio::task_local! {
    pub(super) static PROBE: Probe;
}

/// What the layers below learn about the request being measured.
pub(super) struct Probe {
    pub(super) method: Cell<&'static str>,
    pub(super) code: Cell<Option<i64>>,
}

/// Notes the method label of the request being measured (only called with metrics on).
pub(crate) fn note_method(label: &'static str) {
    let _ = PROBE.try_with(|p| p.method.set(label));
}

/// Notes the JSON-RPC error code of the request being measured (only called with metrics on).
pub(crate) fn note_code(code: i64) {
    let _ = PROBE.try_with(|p| p.code.set(Some(code)));
}
