//! The cycles still to be cut, written down: a cycle is accepted only when all its files stand
//! in one block of the allow file, and a block that no found cycle fits any more is an error, so
//! the list can only shrink.
//!
//! The file: `#` lines are comments; a line `[why]` opens a block; every other non-empty line
//! is one file path of that block.

use std::collections::BTreeSet;
use std::path::PathBuf;

/// One accepted cycle: why it is still there, and the files it may span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The reason given in the block's `[…]` line.
    pub why: String,
    /// The files the cycle may span.
    pub files: BTreeSet<PathBuf>,
}

/// Reads an allow file's text.
///
/// # Errors
/// A file path before the first `[why]` line, or a block without files.
pub fn parse(text: &str) -> anyhow::Result<Vec<Allowed>> {
    let mut blocks: Vec<Allowed> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(why) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            blocks.push(Allowed {
                why: why.trim().to_owned(),
                files: BTreeSet::new(),
            });
            continue;
        }
        let Some(block) = blocks.last_mut() else {
            anyhow::bail!("line {}: a file before any [why] line", number + 1);
        };
        block.files.insert(PathBuf::from(line));
    }
    if let Some(empty) = blocks.iter().find(|b| b.files.is_empty()) {
        anyhow::bail!("block [{}] lists no file", empty.why);
    }
    Ok(blocks)
}

/// The index of the block that accepts a cycle of `files`, if any.
pub fn accepting(blocks: &[Allowed], files: &[PathBuf]) -> Option<usize> {
    blocks
        .iter()
        .position(|block| files.iter().all(|f| block.files.contains(f)))
}
