//! The invariant of ARCHITECTURE.md that modules depend one way: in every
//! crate of the workspace, no module imports one that imports it back,
//! directly or through others — neither the modules at a crate's root nor
//! the sibling modules inside a folder. A module's children may use their
//! parent (that is how Rust nests modules); siblings may not go round.
//!
//! Dependencies are read from the source as written: `crate::a`,
//! `crate::{a, b::c}`, and inside a folder `super::a` and
//! `crate::folder::a`, outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    let here = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    Path::new(&here).join("../..")
}

/// The source that counts: before `#[cfg(test)]`, without comment lines.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segments of the paths that follow `prefix` (`crate::`,
/// `super::`): `a` of `crate::a::b`, `a` and `b` of `crate::{a, b::c}`.
fn heads(src: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `my_crate::`, not `crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            // top-level items of the group, nested groups skipped
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            out.insert(first_segment(&item));
        } else {
            out.insert(first_segment(rest));
        }
    }
    out.remove("");
    out
}

fn first_segment(s: &str) -> String {
    s.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The modules of a folder: `name.rs` files and sub-folders (all of a
/// sub-folder's files are that module), with `mod.rs`/`lib.rs`/`main.rs`
/// as the folder itself.
fn modules(dir: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            out.insert(name, rs_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(name.as_str(), "mod" | "lib" | "main")
        {
            out.insert(name, vec![path]);
        }
    }
    out
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rs_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A cycle among `edges`, if there is one (depth-first search).
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|p| p == m).unwrap();
                    let mut c = path[from..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str())
            && let Some(c) = visit(n, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The dependencies among the modules of `dir`, whose path from the
/// crate root is `inside` (empty at the root).
fn graph(dir: &Path, inside: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(dir);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, files) in &mods {
        let mut deps = BTreeSet::new();
        for f in files {
            let src = code(f);
            if inside.is_empty() {
                deps.extend(heads(&src, "crate::"));
            } else {
                deps.extend(heads(&src, &format!("crate::{inside}::")));
                // `super::` from a file directly in this folder names a sibling
                if f.parent() == Some(dir) {
                    deps.extend(heads(&src, "super::"));
                }
            }
        }
        deps.retain(|d| d != name && mods.contains_key(d));
        edges.insert(name.clone(), deps);
    }
    edges
}

fn folders(dir: &Path, inside: &str, out: &mut Vec<(PathBuf, String)>) {
    out.push((dir.to_path_buf(), inside.to_string()));
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let inner = if inside.is_empty() {
                name
            } else {
                format!("{inside}::{name}")
            };
            folders(&path, &inner, out);
        }
    }
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = workspace().join("crates");
    let mut checked = 0;
    let mut loops = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mut all = Vec::new();
        folders(&src, "", &mut all);
        for (dir, inside) in all {
            let edges = graph(&dir, &inside);
            checked += edges.len();
            if let Some(c) = cycle(&edges) {
                loops.push(format!("{}: {}", dir.display(), c.join(" → ")));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} modules found under {}",
        crates.display()
    );
    assert!(loops.is_empty(), "module loops:\n{}", loops.join("\n"));
}

#[test]
fn the_reader_finds_paths_and_groups_and_the_search_finds_loops() {
    let src = "use crate::{a::X, b, c::{d, e}};\nuse crate::f::g;\nlet x = my_crate::h::i;";
    let got: Vec<String> = heads(src, "crate::").into_iter().collect();
    assert_eq!(got, ["a", "b", "c", "f"].map(String::from));
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        cycle(&edges).unwrap(),
        ["a", "b", "c", "a"].map(String::from)
    );
    let mut acyclic = edges.clone();
    acyclic.get_mut("c").unwrap().clear();
    assert!(cycle(&acyclic).is_none());
}

/// The workspace crates a crate's `[dependencies]` name (not its dev- or
/// build-dependencies): `ken-core.workspace = true`, `ken-x = { path = ... }`.
fn crate_deps(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section != "[dependencies]" {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("").to_string();
        if name.starts_with("ken-") || name.starts_with("ken_") {
            out.insert(name.replace('_', "-"));
        }
    }
    out
}

#[test]
fn crates_depend_on_the_ones_architecture_allows() {
    // ARCHITECTURE.md's first picture: ken-core below everything, the
    // middle crates on ken-core (the store also on ken-vectors), the
    // engine on any of them, the binary on the engine and ken-core.
    let allowed: &[(&str, &[&str])] = &[
        ("ken-core", &[]),
        ("ken-syntax", &["ken-core"]),
        ("ken-source", &["ken-core"]),
        ("ken-vectors", &["ken-core"]),
        ("ken-graph", &["ken-core"]),
        ("ken-embed", &["ken-core"]),
        ("ken-llm", &["ken-core"]),
        ("ken-report", &["ken-core"]),
        ("ken-store", &["ken-core", "ken-vectors"]),
        ("ken", &["ken-core", "ken-engine"]),
    ];
    let crates = workspace().join("crates");
    let mut wrong = Vec::new();
    for (name, ok) in allowed {
        let deps = crate_deps(&crates.join(name).join("Cargo.toml"));
        let extra: Vec<&String> = deps.iter().filter(|d| !ok.contains(&d.as_str())).collect();
        if !extra.is_empty() {
            wrong.push(format!("{name} depends on {extra:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against ARCHITECTURE.md:\n{}",
        wrong.join("\n")
    );
    // the reader sees what is there
    assert!(crate_deps(&crates.join("ken-engine/Cargo.toml")).contains("ken-store"));
}
