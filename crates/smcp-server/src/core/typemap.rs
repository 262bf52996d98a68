//! [`Extensions`]: a small map from type to value, for what extensions attach to a tool and
//! to a call.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;

/// A small map from type to value: what extensions attach to a tool at registration
/// ([`ToolData`]) and to a call before its handler runs
/// ([`ToolCall::extensions`](crate::ToolCall::extensions)).
/// Empty costs nothing.
#[derive(Default)]
pub struct Extensions {
    // Boxed: one word while empty (every tool call carries one), a map only when used.
    #[allow(clippy::box_collection, reason = "keeps an empty map one word wide")]
    map: Option<Box<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
}

/// What extensions attached to a tool when it was registered.
pub type ToolData = Extensions;

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.as_ref().map_or(0, |m| m.len()))
            .finish()
    }
}

impl Extensions {
    /// Nothing attached.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attaches `value`, replacing a value of the same type; returns the old one.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) -> Option<T> {
        self.map
            .get_or_insert_with(Box::default)
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.downcast().ok().map(|b| *b))
    }

    /// The attached value of type `T`.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())?
            .downcast_ref::<T>()
    }

    /// The attached value of type `T`, mutably.
    pub fn get_mut<T: Any + Send + Sync>(&mut self) -> Option<&mut T> {
        self.map
            .as_mut()?
            .get_mut(&TypeId::of::<T>())?
            .downcast_mut::<T>()
    }

    /// Detaches the value of type `T`.
    pub fn remove<T: Any + Send + Sync>(&mut self) -> Option<T> {
        self.map
            .as_mut()?
            .remove(&TypeId::of::<T>())
            .and_then(|b| b.downcast().ok().map(|b| *b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_by_type() {
        let mut e = Extensions::new();
        assert!(e.get::<u32>().is_none());
        assert_eq!(e.insert(7u32), None);
        assert_eq!(e.insert(8u32), Some(7));
        e.insert("s");
        assert_eq!(e.get::<u32>(), Some(&8));
        *e.get_mut::<u32>().unwrap() += 1;
        assert_eq!(e.remove::<u32>(), Some(9));
        assert_eq!(e.get::<&str>(), Some(&"s"));
        assert!(e.get::<u32>().is_none());
    }
}
