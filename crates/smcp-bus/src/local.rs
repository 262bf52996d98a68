//! [`local_only`]: publishing to this process's listeners only, for a change every instance
//! makes itself.

use std::cell::Cell;

thread_local! {
    static LOCAL_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every [`crate::ChangeBus::publish`] on this thread delivering to this
/// process's listeners only. For a change each instance makes (or hears) itself: a shared
/// catalog's revision each instance applies, an upstream each instance follows, a clock each
/// instance ticks; published everywhere, every listener would hear it once per instance.
/// A networked bus checks [`is_local_only`]; the in-process bus delivers locally anyway.
///
/// ```
/// assert!(!smcp_bus::is_local_only());
/// smcp_bus::local_only(|| assert!(smcp_bus::is_local_only()));
/// assert!(!smcp_bus::is_local_only());
/// ```
pub fn local_only<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            LOCAL_ONLY.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(LOCAL_ONLY.with(|c| c.replace(true)));
    f()
}

/// Whether this thread runs inside [`local_only`].
pub fn is_local_only() -> bool {
    LOCAL_ONLY.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_only_is_scoped_and_restored() {
        assert!(!is_local_only());
        local_only(|| {
            assert!(is_local_only());
            local_only(|| assert!(is_local_only()));
            assert!(is_local_only());
        });
        assert!(!is_local_only());
    }

    #[test]
    fn local_only_is_restored_when_f_panics() {
        let caught = std::panic::catch_unwind(|| local_only(|| panic!("inside")));
        assert!(caught.is_err());
        assert!(!is_local_only());
    }
}
