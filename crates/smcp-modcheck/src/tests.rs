//! The checker on small crates written into a temporary directory.

use std::path::{Path, PathBuf};

use crate::check_package;

/// A package directory under the system temp dir, removed on drop.
struct Package(PathBuf);

impl Package {
    fn new(name: &str, files: &[(&str, &str)]) -> Self {
        let dir = std::env::temp_dir().join(format!("smcp-modcheck-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
        Self(dir)
    }

    fn cycles(&self) -> Vec<Vec<String>> {
        check_package(&self.0)
            .unwrap()
            .into_iter()
            .map(|c| c.files.iter().map(|f| rel(&self.0, f)).collect())
            .collect()
    }
}

impl Drop for Package {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rel(base: &Path, file: &Path) -> String {
    file.strip_prefix(base).unwrap().display().to_string()
}

#[test]
fn imports_that_point_one_way_are_no_cycle() {
    let pkg = Package::new(
        "oneway",
        &[
            ("src/lib.rs", "mod a; mod b; pub use a::A;"),
            ("src/a.rs", "use crate::b::B; pub struct A(B);"),
            (
                "src/b.rs",
                "pub struct B; // crate::a::A in a comment is no import\nconst S: &str = \"crate::a::A\";",
            ),
        ],
    );
    assert_eq!(pkg.cycles(), Vec::<Vec<String>>::new());
}

#[test]
fn two_files_that_use_each_other_are_a_cycle() {
    let pkg = Package::new(
        "pair",
        &[
            ("src/lib.rs", "mod a; mod b;"),
            ("src/a.rs", "use crate::b::B; pub struct A(B);"),
            (
                "src/b.rs",
                "pub struct B; fn f() -> crate::a::A { todo!() }",
            ),
        ],
    );
    assert_eq!(
        pkg.cycles(),
        vec![vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()]]
    );
}

#[test]
fn a_child_that_uses_what_its_reexporting_parent_defines_is_a_cycle() {
    let pkg = Package::new(
        "parent",
        &[
            ("src/lib.rs", "mod core;"),
            (
                "src/core/mod.rs",
                "mod handler; pub use handler::Handler; pub struct Limits;",
            ),
            (
                "src/core/handler.rs",
                "use super::Limits; pub struct Handler(Limits);",
            ),
        ],
    );
    assert_eq!(
        pkg.cycles(),
        vec![vec![
            "src/core/handler.rs".to_owned(),
            "src/core/mod.rs".to_owned()
        ]]
    );
}

#[test]
fn a_name_reached_through_reexports_is_held_where_it_is_defined() {
    // `crate::Server` and `super::Server` stand for core/server.rs, not for the files that
    // re-export it: handler.rs depends on server.rs alone, and no loop runs through lib.rs.
    let pkg = Package::new(
        "reexport",
        &[
            ("src/lib.rs", "mod core; pub use core::{Handler, Server};"),
            (
                "src/core/mod.rs",
                "mod handler; mod server; pub use server::Server; pub use handler::Handler;",
            ),
            ("src/core/server.rs", "pub struct Server;"),
            (
                "src/core/handler.rs",
                "use super::Server; pub struct Handler(Server, crate::Server);",
            ),
        ],
    );
    assert_eq!(pkg.cycles(), Vec::<Vec<String>>::new());
}

#[test]
fn a_name_that_loops_through_reexports_back_to_the_user_is_a_cycle() {
    let pkg = Package::new(
        "reexport-loop",
        &[
            ("src/lib.rs", "mod a; mod b; pub use a::*;"),
            (
                "src/a.rs",
                "pub struct A; pub fn f() -> crate::b::B { todo!() }",
            ),
            ("src/b.rs", "pub struct B(crate::A);"),
        ],
    );
    assert_eq!(
        pkg.cycles(),
        vec![vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()]]
    );
}

#[test]
fn a_sibling_named_by_its_own_path_is_no_cycle() {
    let pkg = Package::new(
        "sibling",
        &[
            ("src/lib.rs", "mod core;"),
            (
                "src/core/mod.rs",
                "mod handler; mod server; pub use server::Server; pub use handler::Handler;",
            ),
            ("src/core/server.rs", "pub struct Server;"),
            (
                "src/core/handler.rs",
                "use super::server::Server; pub struct Handler(Server);",
            ),
        ],
    );
    assert_eq!(pkg.cycles(), Vec::<Vec<String>>::new());
}

#[test]
fn nested_use_trees_paths_in_code_and_inline_modules_are_followed() {
    let pkg = Package::new(
        "nested",
        &[
            ("src/main.rs", "mod x; mod y; mod z;"),
            ("src/x.rs", "use crate::{y::{self, Y as _}};"),
            (
                "src/y.rs",
                "pub struct Y; mod inner { fn f() { let _ = super::super::z::Z; } }",
            ),
            ("src/z.rs", "pub struct Z; fn g() { crate::x::nothing(); }"),
        ],
    );
    assert_eq!(
        pkg.cycles(),
        vec![vec![
            "src/x.rs".to_owned(),
            "src/y.rs".to_owned(),
            "src/z.rs".to_owned()
        ]]
    );
}

#[test]
fn test_modules_inside_a_file_and_other_crates_are_not_edges() {
    let pkg = Package::new(
        "tests",
        &[
            (
                "src/lib.rs",
                "mod a; mod b; #[cfg(test)] mod t { use super::*; }",
            ),
            (
                "src/a.rs",
                "use serde::Serialize; use std::fmt; pub struct A; mod tests { use super::A; }",
            ),
            (
                "src/b.rs",
                "use crate::a::A; fn f(x: Option<A>) { x.a::<u8>(); Self::a(); }",
            ),
        ],
    );
    assert_eq!(pkg.cycles(), Vec::<Vec<String>>::new());
}

#[test]
fn every_program_under_src_bin_is_its_own_root() {
    let pkg = Package::new(
        "bins",
        &[
            ("src/bin/one.rs", "mod shared; mod other;"),
            ("src/bin/shared.rs", "pub fn s() { crate::other::o() }"),
            ("src/bin/other.rs", "pub fn o() { crate::shared::s() }"),
        ],
    );
    assert_eq!(
        pkg.cycles(),
        vec![vec![
            "src/bin/other.rs".to_owned(),
            "src/bin/shared.rs".to_owned()
        ]]
    );
}

#[test]
fn an_allow_block_accepts_a_cycle_inside_it_and_nothing_larger() {
    let blocks =
        crate::allow::parse("# comment\n[still to cut]\nsrc/a.rs\nsrc/b.rs\n\n[other]\nsrc/c.rs\n")
            .unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].why, "still to cut");
    let inside = [PathBuf::from("src/a.rs"), PathBuf::from("src/b.rs")];
    let larger = [PathBuf::from("src/a.rs"), PathBuf::from("src/c.rs")];
    assert_eq!(crate::allow::accepting(&blocks, &inside), Some(0));
    assert_eq!(crate::allow::accepting(&blocks, &larger), None);
    assert!(crate::allow::parse("src/a.rs\n").is_err());
    assert!(crate::allow::parse("[empty]\n").is_err());
}

fn lines_of(text: &str) -> usize {
    crate::size::code_lines(text.parse().unwrap())
}

#[test]
fn code_lines_skip_comments_docs_blank_lines_and_test_items() {
    let text = r#"
//! Crate docs.

/// A doc comment.
// A plain comment.
/* A block
   comment. */
fn one() -> u8 {
    let s = "a string
that spans two lines";
    s.len() as u8
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {
        assert_eq!(super::one(), 1);
    }
}

#[cfg(test)]
const FOR_TESTS: u8 = 1;
#[derive(Debug)]
struct Kept;
"#;
    // `fn one`, the two lines of the string, `s.len()`, the closing brace, the derive and `Kept`.
    assert_eq!(lines_of(text), 7);
}

#[test]
fn a_file_declared_under_cfg_test_is_test_code_and_a_large_file_is_reported() {
    let big: String = (0..30).map(|i| format!("fn f{i}() {{}}\n")).collect();
    let pkg = Package::new(
        "size",
        &[
            ("src/lib.rs", "mod big;\n#[cfg(test)]\nmod tests;\n"),
            ("src/big.rs", &big),
            ("src/tests.rs", &big),
        ],
    );
    let over = crate::size::oversized(&pkg.0, 20).unwrap();
    let names: Vec<(String, usize)> = over.iter().map(|(f, n)| (rel(&pkg.0, f), *n)).collect();
    assert_eq!(names, vec![("src/big.rs".to_owned(), 30)]);
    assert!(crate::size::oversized(&pkg.0, 30).unwrap().is_empty());
}

#[test]
fn a_feature_without_a_row_in_the_crate_docs_is_reported() {
    let manifest = "[package]\nname = \"p\"\n\n[features]\ndefault = [\"a\"]\n## A.\na = []\n\"b-c\" = [\"a\"]\nd = []\n\n[dependencies]\nx = \"1\"\n";
    let lib = "//! # Features\n//!\n//! | feature | default | what |\n//! |---|---|---|\n//! | `a` | yes | A |\n//! Mentions `d` in prose only.\n\n/// | `b-c` | not crate docs |\npub fn f() {}\n";
    let pkg = Package::new("features", &[("src/lib.rs", lib)]);
    std::fs::write(pkg.0.join("Cargo.toml"), manifest).unwrap();
    assert_eq!(
        crate::features::undocumented(&pkg.0).unwrap(),
        vec!["b-c".to_owned(), "d".to_owned()]
    );
}
