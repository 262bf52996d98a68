//! What a file names of its own crate: every `use` tree and every path written in the code that
//! starts at `crate`, `self`, `super` or a child module, resolved to the module path it reaches.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use crate::tree::ModPath;

/// What one module (file-backed or inline) says: the names it defines, the names it imports, and
/// every path of the crate it names, made absolute.
#[derive(Debug, Default)]
pub(crate) struct ModuleFacts {
    /// Items defined at the module's top level (`struct`, `fn`, `mod`, `macro_rules!`, …).
    pub(crate) defines: BTreeSet<String>,
    /// Names brought in at the top level by `use`, and the absolute path each stands for.
    pub(crate) imports: BTreeMap<String, ModPath>,
    /// Modules whose names a top-level `use path::*` brings in.
    pub(crate) globs: Vec<ModPath>,
    /// Every path of the crate named anywhere in the module's code.
    pub(crate) references: Vec<ModPath>,
}

/// The facts of every module in one file's tokens, keyed by module path. `module` is the module
/// the tokens belong to and `is_module` answers whether a path names a module of the crate, which
/// decides whether a leading plain name is a child module or something else.
pub(crate) fn facts(
    tokens: TokenStream,
    module: &ModPath,
    is_module: &dyn Fn(&[String]) -> bool,
    out: &mut BTreeMap<ModPath, ModuleFacts>,
) {
    scan(tokens, module, true, is_module, out);
}

const ITEM_KEYWORDS: [&str; 8] = [
    "struct", "enum", "fn", "trait", "type", "const", "static", "union",
];

fn scan(
    tokens: TokenStream,
    module: &ModPath,
    top: bool,
    is_module: &dyn Fn(&[String]) -> bool,
    out: &mut BTreeMap<ModPath, ModuleFacts>,
) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(id) if id == "mod" => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                    if top {
                        out.entry(module.clone())
                            .or_default()
                            .defines
                            .insert(name.to_string());
                    }
                    if let Some(TokenTree::Group(g)) = tokens.get(i + 2)
                        && g.delimiter() == Delimiter::Brace
                    {
                        let mut inner = module.clone();
                        inner.push(name.to_string());
                        scan(g.stream(), &inner, true, is_module, out);
                        i += 3;
                        continue;
                    }
                }
            }
            TokenTree::Ident(id) if top && ITEM_KEYWORDS.iter().any(|k| id == k) => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 1)
                    && !ITEM_KEYWORDS.iter().any(|k| name == k)
                {
                    out.entry(module.clone())
                        .or_default()
                        .defines
                        .insert(name.to_string());
                }
            }
            TokenTree::Ident(id) if top && id == "macro_rules" => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 2) {
                    out.entry(module.clone())
                        .or_default()
                        .defines
                        .insert(name.to_string());
                }
            }
            TokenTree::Ident(id) if id == "use" => {
                let end = tokens[i + 1..]
                    .iter()
                    .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
                    .map_or(tokens.len(), |at| i + 1 + at);
                let mut paths = Vec::new();
                use_tree(&tokens[i + 1..end], Vec::new(), &mut paths);
                let facts = out.entry(module.clone()).or_default();
                for UsePath {
                    path: written,
                    name,
                } in paths
                {
                    let Some(path) = absolute(&written, module, is_module) else {
                        continue;
                    };
                    if top {
                        match name {
                            Some(name) => {
                                facts.imports.insert(name, path.clone());
                            }
                            None => facts.globs.push(path.clone()),
                        }
                    }
                    facts.references.push(path);
                }
                i = end + 1;
                continue;
            }
            TokenTree::Ident(first) => {
                // A path in the code: `first::a::b`, unless `first` is itself the tail of a longer
                // path (`x::first::…`, seen from the start of that one) or of a field (`x.first`).
                let after_sep = i >= 2 && is_path_sep(&tokens, i - 2);
                let after_dot =
                    i >= 1 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                if !after_sep && !after_dot && is_path_sep(&tokens, i + 1) {
                    let mut written = vec![first.to_string()];
                    let mut j = i + 1;
                    while is_path_sep(&tokens, j) {
                        match tokens.get(j + 2) {
                            Some(TokenTree::Ident(seg)) => {
                                written.push(seg.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if let Some(path) = absolute(&written, module, is_module) {
                        out.entry(module.clone()).or_default().references.push(path);
                    }
                    i = j;
                    continue;
                }
            }
            TokenTree::Group(g) => scan(g.stream(), module, false, is_module, out),
            _ => {}
        }
        i += 1;
    }
}

/// `::` at `tokens[at]` and `tokens[at + 1]`.
fn is_path_sep(tokens: &[TokenTree], at: usize) -> bool {
    matches!(
        (tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// One path a use tree names, and the name it binds (`None` for a glob).
struct UsePath {
    path: Vec<String>,
    name: Option<String>,
}

/// Expands a use tree (`a::b::{c, d::{e, f}}`, `a::*`, `a as b`) into the paths it names.
fn use_tree(tokens: &[TokenTree], prefix: Vec<String>, out: &mut Vec<UsePath>) {
    let mut path = prefix;
    // A leading `::` names an external crate: nothing of this one.
    if is_path_sep(tokens, 0) {
        return;
    }
    let mut name = None;
    let mut glob = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(id) if id == "as" => {
                if let Some(TokenTree::Ident(alias)) = tokens.get(i + 1) {
                    name = Some(alias.to_string());
                }
                break;
            }
            TokenTree::Ident(id) if id == "self" && !path.is_empty() => {}
            TokenTree::Ident(id) => path.push(id.to_string()),
            TokenTree::Punct(p) if p.as_char() == '*' => {
                glob = true;
                break;
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for part in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    if !part.is_empty() {
                        use_tree(part, path.clone(), out);
                    }
                }
                return;
            }
            _ => {}
        }
        i += 1;
    }
    if path.is_empty() {
        return;
    }
    let name = if glob {
        None
    } else {
        name.or_else(|| path.last().cloned())
    };
    out.push(UsePath { path, name });
}

/// Makes a written path absolute, or `None` when it names another crate (or a local name).
fn absolute(
    written: &[String],
    module: &ModPath,
    is_module: &dyn Fn(&[String]) -> bool,
) -> Option<ModPath> {
    let (first, rest) = written.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => {
            let mut up = module.clone();
            up.pop()?;
            up
        }
        name => {
            let mut child = module.clone();
            child.push(name.to_owned());
            if !is_module(&child) {
                return None;
            }
            return Some(module.iter().chain(written.iter()).cloned().collect());
        }
    };
    let mut tail = rest.iter().peekable();
    while tail.peek().is_some_and(|seg| *seg == "super") {
        base.pop()?;
        tail.next();
    }
    base.extend(tail.cloned());
    Some(base)
}
