//! The module tree of one crate: which file holds which module, found from the crate roots by
//! following `mod name;` declarations the way rustc does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A module's path inside its crate root, without `crate` (the root itself is empty).
pub(crate) type ModPath = Vec<String>;

/// A source file's tokens, read once.
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// The file, as found under the crate directory.
    pub(crate) path: PathBuf,
    /// The module the file holds.
    pub(crate) module: ModPath,
    /// The file's tokens (comments are gone; doc comments are attributes).
    pub(crate) tokens: TokenStream,
    /// The file is a module declared under `#[cfg(test)]` (or inside one): test code.
    pub(crate) test_only: bool,
}

/// The modules of one crate root (the library, the main binary, or one `src/bin` program).
#[derive(Debug, Default)]
pub(crate) struct ModuleTree {
    /// Every module, file-backed or inline, and the file that holds it.
    pub(crate) modules: BTreeMap<ModPath, PathBuf>,
    /// Every file of the tree, in the order found.
    pub(crate) files: Vec<SourceFile>,
}

/// The crate roots of a package directory: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs` and
/// `src/bin/*/main.rs`.
pub(crate) fn crate_roots(package: &Path) -> Vec<PathBuf> {
    let src = package.join("src");
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .filter(|path| path.is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter_map(|path| {
                if path.is_dir() {
                    Some(path.join("main.rs")).filter(|main| main.is_file())
                } else {
                    Some(path).filter(|p| p.extension().is_some_and(|ext| ext == "rs"))
                }
            })
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// Reads the tree below one crate root.
pub(crate) fn read_tree(root: &Path) -> anyhow::Result<ModuleTree> {
    let mut tree = ModuleTree::default();
    let dir = parent_dir(root);
    read_file(&mut tree, root, Vec::new(), &dir, false)?;
    Ok(tree)
}

fn read_file(
    tree: &mut ModuleTree,
    path: &Path,
    module: ModPath,
    child_dir: &Path,
    test_only: bool,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
    let tokens: TokenStream = text
        .parse()
        .map_err(|err| anyhow::anyhow!("{}: not Rust tokens: {err}", path.display()))?;
    tree.modules.insert(module.clone(), path.to_path_buf());
    let mut children = Vec::new();
    declarations(
        tokens.clone(),
        &module,
        child_dir,
        path,
        &mut tree.modules,
        &mut children,
    );
    tree.files.push(SourceFile {
        path: path.to_path_buf(),
        module,
        tokens,
        test_only,
    });
    for child in children {
        read_file(
            tree,
            &child.file,
            child.module,
            &child.dir,
            test_only || child.test_only,
        )?;
    }
    Ok(())
}

/// A `mod name;` declaration to read from its own file.
struct Child {
    module: ModPath,
    file: PathBuf,
    /// The directory its own children are looked up in.
    dir: PathBuf,
    /// Declared under `#[cfg(test)]`, or inside an inline module that is.
    test_only: bool,
}

/// Finds `mod name;` (to read from its own file) and `mod name { … }` (inline, recorded as held by
/// `file`) in one token stream.
fn declarations(
    tokens: TokenStream,
    module: &ModPath,
    child_dir: &Path,
    file: &Path,
    modules: &mut BTreeMap<ModPath, PathBuf>,
    children: &mut Vec<Child>,
) {
    declarations_in(tokens, module, child_dir, file, modules, children, false);
}

fn declarations_in(
    tokens: TokenStream,
    module: &ModPath,
    child_dir: &Path,
    file: &Path,
    modules: &mut BTreeMap<ModPath, PathBuf>,
    children: &mut Vec<Child>,
    in_test: bool,
) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut path_attr: Option<String> = None;
    let mut cfg_test = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1)
                    && g.delimiter() == Delimiter::Bracket
                {
                    if let Some(value) = path_attribute(g.stream()) {
                        path_attr = Some(value);
                    }
                    cfg_test |= is_cfg_test(g.stream());
                }
            }
            TokenTree::Ident(id) if id == "mod" => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                    let mut child = module.clone();
                    child.push(name.to_string());
                    match tokens.get(i + 2) {
                        Some(TokenTree::Punct(p)) if p.as_char() == ';' => {
                            let found = match path_attr.take() {
                                Some(rel) => Some(parent_dir(file).join(rel)),
                                None => child_file(child_dir, &name.to_string()),
                            };
                            if let Some(found) = found {
                                let dir = if is_dir_owner(&found) {
                                    parent_dir(&found)
                                } else {
                                    child_dir.join(name.to_string())
                                };
                                children.push(Child {
                                    module: child,
                                    file: found,
                                    dir,
                                    test_only: in_test || cfg_test,
                                });
                            }
                        }
                        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                            modules.insert(child.clone(), file.to_path_buf());
                            let dir = child_dir.join(name.to_string());
                            declarations_in(
                                g.stream(),
                                &child,
                                &dir,
                                file,
                                modules,
                                children,
                                in_test || cfg_test,
                            );
                        }
                        _ => {}
                    }
                    i += 2;
                }
                path_attr = None;
                cfg_test = false;
            }
            TokenTree::Group(g) if g.delimiter() != Delimiter::Bracket => {
                path_attr = None;
                cfg_test = false;
            }
            TokenTree::Punct(p) if p.as_char() == ';' => {
                path_attr = None;
                cfg_test = false;
            }
            _ => {}
        }
        i += 1;
    }
}

/// `cfg(test)` as an attribute's contents: the item it marks is compiled for tests only.
pub(crate) fn is_cfg_test(attr: TokenStream) -> bool {
    let mut it = attr.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(TokenTree::Ident(id)), Some(TokenTree::Group(args)), None) if id == "cfg" => {
            let args: Vec<TokenTree> = args.stream().into_iter().collect();
            matches!(args.as_slice(), [TokenTree::Ident(t)] if t == "test")
        }
        _ => false,
    }
}

fn path_attribute(attr: TokenStream) -> Option<String> {
    let mut it = attr.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(TokenTree::Ident(id)), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(lit)))
            if id == "path" && eq.as_char() == '=' =>
        {
            Some(lit.to_string().trim_matches('"').to_owned())
        }
        _ => None,
    }
}

fn child_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let flat = dir.join(format!("{name}.rs"));
    let nested = dir.join(name).join("mod.rs");
    [flat, nested].into_iter().find(|p| p.is_file())
}

/// `mod.rs`, `lib.rs` and `main.rs` own the directory they stand in; any other file owns the
/// directory named after it.
fn is_dir_owner(file: &Path) -> bool {
    matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs" | "main.rs")
    )
}

fn parent_dir(file: &Path) -> PathBuf {
    file.parent().map(Path::to_path_buf).unwrap_or_default()
}
