//! Files as modules: the keys under which a file can be imported, and the
//! keys an import spec may name, per language.
//!
//! A file registers every suffix of its module path (`src/flask/app.py` →
//! `app`, `flask/app`, `src/flask/app`), so absolute imports resolve without
//! knowing where the package root is; relative imports (`./router`,
//! `.app`, `require_relative`) are turned into exact paths.

use std::collections::HashSet;

use ken_core::Language;

/// Languages whose files can see each other's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Python,
    Rust,
    Js,
    Go,
    Jvm,
    C,
    CSharp,
    Ruby,
    Php,
    Bash,
    Other,
}

pub(crate) fn family(lang: Language) -> Family {
    match lang {
        Language::Python | Language::Notebook => Family::Python,
        Language::Rust => Family::Rust,
        Language::JavaScript | Language::TypeScript | Language::Tsx => Family::Js,
        Language::Go => Family::Go,
        Language::Java | Language::Scala => Family::Jvm,
        Language::C | Language::Cpp => Family::C,
        Language::CSharp => Family::CSharp,
        Language::Ruby => Family::Ruby,
        Language::Php => Family::Php,
        Language::Bash => Family::Bash,
        _ => Family::Other,
    }
}

impl Family {
    /// Imports that cannot be found in the repository are outside it (so a
    /// name reached through them is not looked for elsewhere).
    pub fn reliable_modules(self) -> bool {
        matches!(self, Family::Python | Family::Rust | Family::Js)
    }

    /// A bare name inside a method may be a member of the enclosing class.
    pub fn implicit_self(self) -> bool {
        matches!(
            self,
            Family::Jvm | Family::C | Family::CSharp | Family::Ruby
        )
    }

    /// Namespaces of the standard library (`std::string`, `core::fmt`).
    pub fn std_roots(self) -> &'static [&'static str] {
        match self {
            Family::C => &["std", "boost"],
            Family::Rust => &["std", "core", "alloc"],
            Family::CSharp => &["System", "Microsoft"],
            Family::Jvm => &["java", "javax", "scala"],
            _ => &[],
        }
    }

    /// All files of a directory share one namespace.
    pub fn package_dirs(self) -> bool {
        matches!(self, Family::Go)
    }
}

/// Where a module may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// An exact repository path.
    Path(String),
    /// A module key (see [`module_keys`]).
    Key(String),
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn strip_ext(path: &str) -> &str {
    let (dir_len, file) = match path.rsplit_once('/') {
        Some((d, f)) => (d.len() + 1, f),
        None => (0, path),
    };
    match file.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => &path[..dir_len + stem.len()],
        _ => path,
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Every suffix of `segs`, joined with `/`, prefixed by `prefix`.
fn suffixes(prefix: &str, segs: &[&str], out: &mut Vec<String>) {
    for i in 0..segs.len() {
        out.push(format!("{prefix}{}", segs[i..].join("/")));
    }
}

/// `a/./b/../c` → `a/c`; `None` when it climbs out of the repository.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out.join("/"))
}

/// Where Rust crates start: directories holding a `lib.rs` or `main.rs`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    pub rust_roots: HashSet<String>,
}

impl Layout {
    pub fn add(&mut self, path: &str) {
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        if matches!(file, "lib.rs" | "main.rs") {
            self.rust_roots.insert(dir.to_string());
        }
    }
}

/// A Rust file's crate root (the nearest directory above it holding a
/// `lib.rs` or `main.rs`; else up to the last `src`; else its directory)
/// and its module path inside the crate.
pub(crate) fn rust_module(path: &str, layout: &Layout) -> (String, Vec<String>) {
    let segs = segments(strip_ext(path));
    let dirs = segs.len().saturating_sub(1);
    let root_len = (0..=dirs)
        .rev()
        .find(|&i| layout.rust_roots.contains(&segs[..i].join("/")))
        .or_else(|| {
            segs[..dirs]
                .iter()
                .rposition(|s| *s == "src")
                .map(|i| i + 1)
        })
        .unwrap_or(dirs);
    let root = segs[..root_len].join("/");
    let mut module: Vec<String> = segs[root_len..].iter().map(|s| s.to_string()).collect();
    if matches!(
        module.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        module.pop();
    }
    (root, module)
}

/// The name a Rust crate rooted at `root` is probably used under: the
/// directory above `src` (`crates/ignore/src` → `ignore`).
pub(crate) fn rust_crate_dir(root: &str) -> &str {
    let root = root.strip_suffix("/src").unwrap_or(root);
    root.rsplit('/').next().unwrap_or(root)
}

/// The keys a file registers as a module.
pub(crate) fn module_keys(path: &str, lang: Language, layout: &Layout) -> Vec<String> {
    let mut keys = Vec::new();
    match family(lang) {
        Family::Python => {
            let mut segs = segments(strip_ext(path));
            if segs.last() == Some(&"__init__") {
                segs.pop();
            }
            suffixes("", &segs, &mut keys);
        }
        Family::Js => {
            let mut segs = segments(strip_ext(path));
            // `lib/router/index.js` is `lib/router`; `x.d.ts` is `x`.
            if let Some(last) = segs.last_mut() {
                *last = last.strip_suffix(".d").unwrap_or(last);
            }
            keys.push(format!("js:{}", segs.join("/")));
            if segs.last() == Some(&"index") {
                segs.pop();
                keys.push(format!("js:{}", segs.join("/")));
            }
        }
        Family::Rust => {
            let (root, module) = rust_module(path, layout);
            keys.push(format!("rs:{root}#{}", module.join("/")));
            keys.push(format!(
                "rsname:{}#{}",
                rust_crate_dir(&root),
                module.join("/")
            ));
        }
        Family::Go => {
            suffixes("pkg:", &segments(dir_of(path)), &mut keys);
        }
        Family::Jvm => {
            suffixes("", &segments(strip_ext(path)), &mut keys);
            suffixes("pkg:", &segments(dir_of(path)), &mut keys);
        }
        Family::C | Family::Bash => suffixes("", &segments(path), &mut keys),
        Family::Ruby | Family::Php => suffixes("", &segments(strip_ext(path)), &mut keys),
        Family::CSharp | Family::Other => {}
    }
    keys
}

/// Where the module `spec`, imported by the file `importer`, may be: in
/// order of preference. Empty when it cannot be in the repository.
pub(crate) fn module_lookups(
    importer: &str,
    lang: Language,
    spec: &str,
    layout: &Layout,
) -> Vec<Lookup> {
    let dir = dir_of(importer);
    let join = |rel: &str| normalize(&format!("{dir}/{rel}"));
    let mut out = Vec::new();
    match family(lang) {
        Family::Python => {
            let dots = spec.bytes().take_while(|&b| b == b'.').count();
            let rest = spec[dots..].replace('.', "/");
            if dots > 0 {
                // `.` is the importer's package, `..` its parent.
                let mut base = dir.to_string();
                for _ in 1..dots {
                    base = dir_of(&base).to_string();
                }
                let stem = if rest.is_empty() {
                    base.clone()
                } else if base.is_empty() {
                    rest.clone()
                } else {
                    format!("{base}/{rest}")
                };
                if let Some(p) = normalize(&stem) {
                    if !rest.is_empty() {
                        out.push(Lookup::Path(format!("{p}.py")));
                        out.push(Lookup::Path(format!("{p}.pyi")));
                    }
                    let init = if p.is_empty() {
                        String::new()
                    } else {
                        format!("{p}/")
                    };
                    out.push(Lookup::Path(format!("{init}__init__.py")));
                }
            } else if !rest.is_empty() {
                out.push(Lookup::Key(rest));
            }
        }
        Family::Js => {
            if spec.starts_with('.')
                && let Some(p) = join(spec)
            {
                out.push(Lookup::Key(format!("js:{}", strip_js_ext(&p))));
            }
        }
        Family::Go => {
            let segs = segments(spec);
            for i in 0..segs.len() {
                out.push(Lookup::Key(format!("pkg:{}", segs[i..].join("/"))));
            }
        }
        Family::Jvm => {
            let path = spec.replace('.', "/");
            out.push(Lookup::Key(path.clone()));
            out.push(Lookup::Key(format!("pkg:{path}")));
        }
        Family::C | Family::Bash => {
            if let Some(p) = join(spec) {
                out.push(Lookup::Path(p));
            }
            let trimmed = spec.trim_start_matches("./");
            if !trimmed.starts_with("..") && !trimmed.starts_with('$') {
                out.push(Lookup::Key(trimmed.to_string()));
            }
        }
        Family::Ruby => {
            if spec.starts_with('.') {
                if let Some(p) = join(spec) {
                    out.push(Lookup::Path(format!("{}.rb", p.trim_end_matches(".rb"))));
                }
            } else {
                out.push(Lookup::Key(spec.trim_end_matches(".rb").to_string()));
            }
        }
        Family::Php => {
            if spec.contains('/') || spec.ends_with(".php") {
                if let Some(p) = join(spec.trim_start_matches('/')) {
                    out.push(Lookup::Path(p));
                }
            } else {
                let segs: Vec<&str> = spec.split('\\').filter(|s| !s.is_empty()).collect();
                for i in 0..segs.len().saturating_sub(1) {
                    out.push(Lookup::Key(segs[i..].join("/")));
                }
                if segs.len() == 1 {
                    out.push(Lookup::Key(segs[0].to_string()));
                }
            }
        }
        Family::Rust => out.extend(rust_lookups(importer, spec, layout)),
        Family::CSharp | Family::Other => {}
    }
    out
}

fn strip_js_ext(path: &str) -> &str {
    for ext in [
        ".d.ts", ".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts", ".cts",
    ] {
        if let Some(p) = path.strip_suffix(ext) {
            return p;
        }
    }
    path
}

/// `crate::a::b`, `self::a`, `super::a`, `other_crate::a`.
fn rust_lookups(importer: &str, spec: &str, layout: &Layout) -> Vec<Lookup> {
    let (root, module) = rust_module(importer, layout);
    let segs: Vec<&str> = spec.split("::").filter(|s| !s.is_empty()).collect();
    let Some((first, rest)) = segs.split_first() else {
        return Vec::new();
    };
    let key = |base: &[String], rest: &[&str]| {
        let mut m: Vec<&str> = base.iter().map(String::as_str).collect();
        m.extend(rest);
        Lookup::Key(format!("rs:{root}#{}", m.join("/")))
    };
    match *first {
        "crate" => vec![key(&[], rest)],
        "self" => vec![key(&module, rest)],
        "super" => {
            let mut parent = module.clone();
            parent.pop();
            let mut rest = rest;
            while let Some(("super", r)) = rest.split_first().map(|(a, b)| (*a, b)) {
                parent.pop();
                rest = r;
            }
            vec![key(&parent, rest)]
        }
        "std" | "core" | "alloc" => Vec::new(),
        name => {
            // A module of this crate (2015 paths, `mod` siblings), then a
            // crate of the workspace: `grep_searcher` may live in `crates/searcher`.
            let mut out = vec![key(&module, &segs), key(&[], &segs)];
            out.push(Lookup::Key(format!("rscrate:{name}#{}", rest.join("/"))));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Layout {
        Layout::default()
    }

    #[test]
    fn python_modules() {
        let keys = module_keys("src/flask/app.py", Language::Python, &none());
        assert_eq!(keys, ["src/flask/app", "flask/app", "app"]);
        assert_eq!(
            module_keys("src/flask/__init__.py", Language::Python, &none()),
            ["src/flask", "flask"]
        );
        assert_eq!(
            module_lookups("src/flask/cli.py", Language::Python, ".app", &none()),
            [
                Lookup::Path("src/flask/app.py".into()),
                Lookup::Path("src/flask/app.pyi".into()),
                Lookup::Path("src/flask/app/__init__.py".into())
            ]
        );
        assert_eq!(
            module_lookups("src/flask/json/tag.py", Language::Python, "..", &none()),
            [Lookup::Path("src/flask/__init__.py".into())]
        );
        assert_eq!(
            module_lookups("a.py", Language::Python, "flask.app", &none()),
            [Lookup::Key("flask/app".into())]
        );
    }

    #[test]
    fn js_modules() {
        assert_eq!(
            module_lookups(
                "lib/express.js",
                Language::JavaScript,
                "./router/index.js",
                &none()
            ),
            [Lookup::Key("js:lib/router/index".into())]
        );
        assert_eq!(
            module_keys("lib/router/index.js", Language::JavaScript, &none()),
            ["js:lib/router/index", "js:lib/router"]
        );
        assert!(module_lookups("lib/a.js", Language::JavaScript, "debug", &none()).is_empty());
        assert!(module_lookups("a.js", Language::JavaScript, "../x", &none()).is_empty());
    }

    #[test]
    fn rust_modules() {
        assert_eq!(
            rust_module("crates/ignore/src/walk.rs", &none()),
            ("crates/ignore/src".into(), vec!["walk".into()])
        );
        assert_eq!(
            rust_module("crates/ignore/src/dir/mod.rs", &none()).1,
            vec!["dir".to_string()]
        );
        assert!(rust_module("src/lib.rs", &none()).1.is_empty());
        let mut layout = Layout::default();
        layout.add("crates/core/main.rs");
        assert_eq!(
            rust_module("crates/core/flags/defs.rs", &layout),
            ("crates/core".into(), vec!["flags".into(), "defs".into()])
        );
        assert_eq!(rust_crate_dir("crates/ignore/src"), "ignore");
        assert_eq!(
            module_lookups(
                "crates/ignore/src/dir.rs",
                Language::Rust,
                "crate::walk",
                &none()
            ),
            [Lookup::Key("rs:crates/ignore/src#walk".into())]
        );
        assert_eq!(
            module_lookups(
                "crates/ignore/src/a/b.rs",
                Language::Rust,
                "super::c",
                &none()
            ),
            [Lookup::Key("rs:crates/ignore/src#a/c".into())]
        );
    }

    #[test]
    fn go_and_c_modules() {
        assert_eq!(
            module_keys("doc/man_docs.go", Language::Go, &none()),
            ["pkg:doc"]
        );
        assert!(module_keys("command.go", Language::Go, &none()).is_empty());
        let l = module_lookups("x.go", Language::Go, "github.com/spf13/cobra/doc", &none());
        assert_eq!(l.last(), Some(&Lookup::Key("pkg:doc".into())));
        assert_eq!(
            module_lookups("src/a.c", Language::C, "util/buf.h", &none()),
            [
                Lookup::Path("src/util/buf.h".into()),
                Lookup::Key("util/buf.h".into())
            ]
        );
        assert_eq!(normalize("a/./b/../c"), Some("a/c".into()));
        assert_eq!(normalize("../x"), None);
    }
}
