//! Odd input never panics, never takes long, and still yields bounded chunks.

mod common;

use std::time::{Duration, Instant};

use common::*;
use ken_core::ChunkKind;
use ken_syntax::{ChunkOptions, parse_file};

/// Run `f` on a thread with a small stack: nothing may recurse per level
/// of nesting.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn timed(path: &str, text: &str) -> (ken_core::FileSyntax, Duration) {
    let t0 = Instant::now();
    let fs = parse(path, text);
    (fs, t0.elapsed())
}

#[test]
fn deep_nesting_returns_promptly() {
    let n = 10_000;
    let cases = [
        (
            "deep.py",
            format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "open.py",
            format!("def f():\n    return {}\n", "[".repeat(n)),
        ),
        (
            "deep.js",
            format!("const a = {}0{};\n", "[".repeat(n), "]".repeat(n)),
        ),
        (
            "fns.js",
            format!("{}{}", "function f() {\n".repeat(n), "}\n".repeat(n)),
        ),
        (
            "deep.rs",
            format!("fn main() {{\n{}{}\n}}\n", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "parens.rs",
            format!("fn f() -> u8 {{ {}1{} }}\n", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "deep.c",
            format!(
                "int f() {{ return {}1{}; }}\n",
                "(".repeat(n),
                ")".repeat(n)
            ),
        ),
        (
            "deep.rb",
            format!("{}{}", "def f\n".repeat(2000), "end\n".repeat(2000)),
        ),
    ];
    for (path, text) in cases {
        let (fs, took) = small_stack(move || {
            let (fs, took) = timed(path, &text);
            (fs, took)
        });
        assert!(took < Duration::from_secs(10), "{path}: {took:?}");
        assert!(!fs.chunks.is_empty(), "{path}");
    }
}

#[test]
fn deeply_nested_definitions_are_found_to_a_depth() {
    let n = 3000;
    let text = format!("{}{}", "function f() {\n".repeat(n), "}\n".repeat(n));
    let fs = small_stack(move || parse("nested.js", &text));
    assert!(
        fs.definitions.len() > 10,
        "the outer functions are still found"
    );
    assert!(fs.definitions.len() < n, "the walk stops at a depth");
    assert!(
        fs.diagnostics.iter().any(|d| d.contains("nested deeper")),
        "{:?}",
        fs.diagnostics
    );
}

#[test]
fn a_five_megabyte_minified_line_gives_bounded_chunks() {
    let unit = "function a(b){return b&&b.c?b.c(d,e):f(g,[1,2,3],{h:i})}var x=a(1);";
    let text = unit.repeat(5 * 1024 * 1024 / unit.len() + 1);
    assert!(text.len() > 5_000_000 && !text.contains('\n'));
    let opts = ChunkOptions::default();
    let t0 = Instant::now();
    let fs = parse_file("dist/app.min.js", &text, &opts);
    let took = t0.elapsed();
    check_invariants("dist/app.min.js", &text, &fs);
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        fs.chunks
            .iter()
            .all(|c| c.text.len() <= opts.max_window_bytes)
    );
    assert!(
        fs.chunks.len() <= text.len() / opts.max_window_bytes + 2,
        "{}",
        fs.chunks.len()
    );
    assert_eq!(
        fs.chunks.iter().map(|c| c.text.len()).sum::<usize>(),
        text.len(),
        "nothing lost"
    );
    assert!(!fs.diagnostics.is_empty());
}

#[test]
fn multibyte_minified_lines_are_cut_at_char_boundaries() {
    let text = "var s='héllo wörld ✓ 日本語';".repeat(200_000);
    let fs = parse("x.min.js", &text);
    assert!(fs.chunks.iter().all(|c| c.text.len() <= 6000));
}

#[test]
fn a_parse_timeout_falls_back_to_windows() {
    let text = "def f(x):\n    return [x, x, x]\n\n".repeat(20_000);
    let opts = ChunkOptions {
        parse_timeout_ms: 1,
        ..ChunkOptions::default()
    };
    let fs = parse_file("slow.py", &text, &opts);
    check_invariants("slow.py", &text, &fs);
    assert!(fs.chunks.iter().all(|c| c.kind == ChunkKind::Window));
    assert!(
        fs.diagnostics.iter().any(|d| d.contains("longer than")),
        "{:?}",
        fs.diagnostics
    );
}

#[test]
fn a_file_of_syntax_errors_falls_back_to_windows() {
    let text = "}}}} {{{{ ))) ((( ;;; <<< >>> ]]] [[[ \n".repeat(500);
    let fs = parse("garbage.rs", &text);
    assert!(
        fs.chunks.iter().all(|c| c.kind == ChunkKind::Window),
        "{:?}",
        summary(&fs)
    );
    assert!(
        fs.diagnostics.iter().any(|d| d.contains("could not read")),
        "{:?}",
        fs.diagnostics
    );
}

#[test]
fn empty_and_blank_files_have_no_chunks() {
    for path in [
        "a.py", "a.rs", "a.js", "a.ts", "a.tsx", "a.go", "a.java", "a.c", "a.cpp", "a.cs", "a.rb",
        "a.php", "a.sh", "a.scala", "a.ipynb", "a.md", "a.json", "a.yaml", "a.toml", "a.txt",
        "Makefile",
    ] {
        for text in ["", "   \n\n\t  \r\n  "] {
            let fs = parse(path, text);
            assert!(fs.chunks.is_empty(), "{path} {text:?}: {:?}", summary(&fs));
            assert!(fs.definitions.is_empty(), "{path}");
        }
    }
}

#[test]
fn nul_bytes_and_garbage_never_panic() {
    let mut garbage = String::new();
    let mut x: u32 = 12345;
    for _ in 0..20_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        garbage.push(char::from_u32((x >> 16) % 0x2FF).unwrap_or('?'));
    }
    let with_nul = "def f():\n    return '\0'\n\0\0\0\nclass A:\n    pass\n".repeat(100);
    for path in [
        "g.py", "g.rs", "g.js", "g.ts", "g.tsx", "g.go", "g.java", "g.c", "g.cpp", "g.cs", "g.rb",
        "g.php", "g.sh", "g.scala", "g.ipynb", "g.md", "g.json", "g.txt",
    ] {
        parse(path, &garbage);
        parse(path, &with_nul);
        parse(path, "\0");
    }
    let fs = parse("nul.py", &with_nul);
    assert!(fs.definitions.iter().any(|d| d.qualname == "A"));
}

#[test]
fn crlf_line_endings() {
    let text = fixture("large.py").replace('\n', "\r\n");
    let fs = parse("crlf.py", &text);
    check_no_line_lost("crlf.py", &text, &fs);
    let lf = parse("lf.py", &fixture("large.py"));
    assert_eq!(fs.definitions.len(), lf.definitions.len());
    for (a, b) in fs.definitions.iter().zip(&lf.definitions) {
        assert_eq!(
            (&a.qualname, a.start_line, a.end_line),
            (&b.qualname, b.start_line, b.end_line)
        );
    }
    let c = chunk(&fs, "find_best_app", ChunkKind::Function);
    assert_eq!(c.doc.as_deref().map(|d| d.contains('\r')), Some(false));
    assert!(c.signature.as_deref().is_some_and(|s| !s.contains('\r')));
}

#[test]
fn nonsense_options_do_not_panic() {
    let text = fixture("large.rs");
    let opts = ChunkOptions {
        whole_file_chars: 0,
        max_chunk_chars: 0,
        max_definition_chars: 0,
        window_lines: 0,
        window_overlap: 100,
        max_window_bytes: 0,
        parse_timeout_ms: 0,
    };
    let fs = parse_file("x.rs", &text, &opts);
    check_invariants("x.rs", &text, &fs);
    assert!(!fs.chunks.is_empty());
}

/// After a type with generic call signatures, the TypeScript grammar
/// reads `<T>(...): T => {...}` as a type assertion around an arrow
/// function (hono's `useSyncExternalStore`): still a definition.
#[test]
fn a_generic_arrow_read_as_a_type_assertion_is_a_definition() {
    let text = "type UseStateType = {\n  <T>(initialState: T | (() => T)): [T, Update<T>]\n  <T = undefined>(): [T | undefined, Update<T | undefined>]\n}\n\nexport const useSyncExternalStore = <T>(\n  subscribe: (callback: () => void) => () => void,\n  getSnapshot: () => T\n): T => {\n  const update = () => getSnapshot()\n  return update()\n}\n";
    let syntax = parse_file("hooks.ts", text, &ChunkOptions::default());
    let defs: Vec<(&str, u32, u32)> = syntax
        .definitions
        .iter()
        .map(|d| (d.qualname.as_str(), d.start_line, d.end_line))
        .collect();
    assert!(defs.contains(&("useSyncExternalStore", 6, 12)), "{defs:?}");
    // what it holds is nested in it
    assert!(
        defs.iter().any(|d| d.0 == "useSyncExternalStore.update"),
        "{defs:?}"
    );
}
