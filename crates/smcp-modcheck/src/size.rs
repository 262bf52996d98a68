//! Lines of code per file: the lines that hold a token, outside doc comments and outside items
//! compiled for tests only (`#[cfg(test)]`, and every file of a module declared under it).
//! Ordinary comments and blank lines are not tokens, so they never count.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

use crate::tree;

/// Every non-test file of the package in `dir` (all its crate roots) with more than `max` lines
/// of code, and its count, largest first.
///
/// # Errors
/// A file that cannot be read or is not Rust tokens.
pub fn oversized(dir: &Path, max: usize) -> anyhow::Result<Vec<(PathBuf, usize)>> {
    let mut seen = BTreeSet::new();
    let mut over = Vec::new();
    for root in tree::crate_roots(dir) {
        for file in tree::read_tree(&root)?.files {
            if file.test_only || !seen.insert(file.path.clone()) {
                continue;
            }
            let lines = code_lines(file.tokens);
            if lines > max {
                over.push((file.path, lines));
            }
        }
    }
    over.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(over)
}

/// The number of lines of code in `tokens` (see the module docs).
pub fn code_lines(tokens: TokenStream) -> usize {
    let mut lines = BTreeSet::new();
    collect(tokens, &mut lines);
    lines.len()
}

fn collect(tokens: TokenStream, lines: &mut BTreeSet<usize>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        if let Some((attr, next)) = attribute(&tokens, i) {
            if is_doc(attr.stream()) {
                i = next;
                continue;
            }
            if tree::is_cfg_test(attr.stream()) {
                i = item_end(&tokens, next);
                continue;
            }
        }
        match &tokens[i] {
            TokenTree::Group(group) => {
                let span = group.span();
                lines.insert(span.start().line);
                lines.insert(span.end().line);
                collect(group.stream(), lines);
            }
            token => {
                let span = token.span();
                lines.extend(span.start().line..=span.end().line);
            }
        }
        i += 1;
    }
}

/// The attribute `#[…]` or `#![…]` at `i`: its bracket group and the index after it.
fn attribute(tokens: &[TokenTree], i: usize) -> Option<(&proc_macro2::Group, usize)> {
    let TokenTree::Punct(hash) = tokens.get(i)? else {
        return None;
    };
    if hash.as_char() != '#' {
        return None;
    }
    let at = match tokens.get(i + 1)? {
        TokenTree::Punct(bang) if bang.as_char() == '!' => i + 2,
        _ => i + 1,
    };
    match tokens.get(at)? {
        TokenTree::Group(group) if group.delimiter() == Delimiter::Bracket => Some((group, at + 1)),
        _ => None,
    }
}

/// `doc = "…"`: what a doc comment becomes.
fn is_doc(attr: TokenStream) -> bool {
    matches!(attr.into_iter().next(), Some(TokenTree::Ident(id)) if id == "doc")
}

/// The index just past the item that starts at `start`: its further attributes, then tokens up to
/// a `;` or a brace group at this level (`mod tests { … }`, `fn f() { … }`, `use a::b;`).
fn item_end(tokens: &[TokenTree], start: usize) -> usize {
    let mut i = start;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == ';' => return i + 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                // `struct S { … }` and `impl T { … }` end here; `= { … };` goes on to its `;`.
                return match tokens.get(i + 1) {
                    Some(TokenTree::Punct(p)) if p.as_char() == ';' => i + 2,
                    _ => i + 1,
                };
            }
            _ => {}
        }
        i += 1;
    }
    i
}
