//! Finds cycles among the files of one crate.
//!
//! A file *uses* another when it names a path of the crate that the other file holds: a `use`
//! item, or a path written in the code (`crate::a::b`, `super::x`, `child::Item`). A path is held
//! by the file of its longest module prefix, so a name re-exported by `mod.rs` is held by
//! `mod.rs`: a child that imports it through its parent depends on the parent, and a parent that
//! re-exports the child depends on the child. `mod name;` itself is ownership, not use.
//!
//! Any strongly connected set of two or more files is a cycle; [`check_package`] reports each with
//! the names that tie it. Reading is by tokens, without a compiler, so a path inside a macro's
//! input counts like any other and a string or comment never does.

pub mod allow;
pub mod features;
mod graph;
mod refs;
pub mod size;
mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use graph::strongly_connected;

/// One cycle: its files, and each edge among them with the paths that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The files of the cycle, sorted.
    pub files: Vec<PathBuf>,
    /// `(from, to, names)` for every use between two files of the cycle.
    pub edges: Vec<(PathBuf, PathBuf, BTreeSet<String>)>,
}

/// Every cycle among the modules of the package in `dir` (all its crate roots).
///
/// # Errors
/// A file that cannot be read or is not Rust tokens.
pub fn check_package(dir: &Path) -> anyhow::Result<Vec<Cycle>> {
    let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>> = BTreeMap::new();
    for root in tree::crate_roots(dir) {
        let tree = tree::read_tree(&root)?;
        let is_module = |path: &[String]| tree.modules.contains_key(path);
        let mut facts = BTreeMap::new();
        for file in &tree.files {
            refs::facts(file.tokens.clone(), &file.module, &is_module, &mut facts);
        }
        let crate_view = Crate {
            modules: &tree.modules,
            facts: &facts,
        };
        for (module, module_facts) in &facts {
            let Some(file) = tree.modules.get(module) else {
                continue;
            };
            let from = edges.entry(file.clone()).or_default();
            for path in &module_facts.references {
                let Some((holder, name)) = crate_view.definition(path, 0) else {
                    continue;
                };
                if &holder != file {
                    from.entry(holder.clone()).or_default().insert(name);
                }
            }
        }
        for file in &tree.files {
            edges.entry(file.path.clone()).or_default();
        }
    }
    let nodes: Vec<PathBuf> = edges.keys().cloned().collect();
    let index: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let adjacency: Vec<Vec<usize>> = nodes
        .iter()
        .map(|from| {
            edges[from]
                .keys()
                .filter_map(|to| index.get(to).copied())
                .collect()
        })
        .collect();
    let mut cycles = Vec::new();
    for component in strongly_connected(&adjacency) {
        if component.len() < 2 {
            continue;
        }
        let members: BTreeSet<&PathBuf> = component.iter().map(|&i| &nodes[i]).collect();
        let mut cycle_edges = Vec::new();
        for from in &members {
            for (to, names) in &edges[*from] {
                if members.contains(to) {
                    cycle_edges.push(((*from).clone(), to.clone(), names.clone()));
                }
            }
        }
        cycles.push(Cycle {
            files: members.into_iter().cloned().collect(),
            edges: cycle_edges,
        });
    }
    Ok(cycles)
}

/// How deep a chain of re-exports is followed before the re-exporting file is taken as the holder.
const MAX_REEXPORTS: usize = 16;

/// One crate root's modules and what each says.
struct Crate<'a> {
    modules: &'a BTreeMap<Vec<String>, PathBuf>,
    facts: &'a BTreeMap<Vec<String>, refs::ModuleFacts>,
}

impl Crate<'_> {
    /// The file that defines what `path` names, following re-exports (`pub use`, and the imports a
    /// child reaches through `super::`), and the name it is used by. A path that ends at a module
    /// is held by that module's file.
    fn definition(&self, path: &[String], depth: usize) -> Option<(PathBuf, String)> {
        let len = (0..=path.len())
            .rev()
            .find(|len| self.modules.contains_key(&path[..*len]))?;
        let module = &path[..len];
        let file = self.modules.get(module)?;
        let Some(name) = path.get(len) else {
            let name = path.last().cloned().unwrap_or_else(|| "crate".to_owned());
            return Some((file.clone(), name));
        };
        let here = Some((file.clone(), name.clone()));
        if depth >= MAX_REEXPORTS {
            return here;
        }
        let Some(facts) = self.facts.get(module) else {
            return here;
        };
        if facts.defines.contains(name) {
            return here;
        }
        if let Some(target) = facts.imports.get(name) {
            let mut next = target.clone();
            next.extend(path[len + 1..].iter().cloned());
            if next.as_slice() != path {
                return self.definition(&next, depth + 1).or(here);
            }
        }
        for glob in &facts.globs {
            let Some(source) = self.facts.get(glob) else {
                continue;
            };
            if source.defines.contains(name) || source.imports.contains_key(name) {
                let mut next = glob.clone();
                next.extend(path[len..].iter().cloned());
                return self.definition(&next, depth + 1).or(here);
            }
        }
        here
    }
}

#[cfg(test)]
mod tests;
