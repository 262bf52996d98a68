//! [`SpecReference`]: the `specReferences` entry of a check, read by the report and built by
//! each SEP citation.

use serde::{Deserialize, Serialize};

/// A spec reference: which SEP section and sentence the check tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecReference {
    /// Short id, e.g. `SEP-2631 §6`.
    pub id: String,
    /// URL of the SEP plus section anchor.
    pub url: String,
    /// The sentence tested, quoted from the SEP (or the REQUIREMENTS decision it rests on).
    pub sentence: String,
}
