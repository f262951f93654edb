//! Small files (≤ 3,000 characters) in every language: one `File` chunk,
//! whole, and every definition listed. Expected definitions live next to
//! each fixture in `small.EXT.defs` (`kind start-end qualname | signature`);
//! run with `KEN_BLESS=1` to rewrite them after a deliberate change, then
//! review the diff.

mod common;

use common::*;
use ken_core::ChunkKind;

const FILES: &[&str] = &[
    "small.py",
    "small.rs",
    "small.js",
    "small.ts",
    "small.tsx",
    "small.go",
    "small.java",
    "small.c",
    "small.cpp",
    "small.cs",
    "small.rb",
    "small.php",
    "small.sh",
    "small.scala",
];

fn listing(fs: &ken_core::FileSyntax) -> String {
    let mut out = String::new();
    for d in &fs.definitions {
        out.push_str(&format!(
            "{} {}-{} {} | {}\n",
            d.kind,
            d.start_line,
            d.end_line,
            d.qualname,
            d.signature.as_deref().unwrap_or("")
        ));
    }
    out
}

#[test]
fn small_files_list_every_definition() {
    let bless = std::env::var_os("KEN_BLESS").is_some();
    let mut failures = Vec::new();
    for file in FILES {
        let text = fixture(file);
        assert!(text.chars().count() <= 3000, "{file}");
        let fs = parse(file, &text);
        assert_eq!(fs.chunks.len(), 1, "{file}: {:?}", summary(&fs));
        let c = &fs.chunks[0];
        assert_eq!(
            (c.kind, c.start_line, c.text.as_str()),
            (ChunkKind::File, 1, text.as_str())
        );
        assert!(fs.diagnostics.is_empty(), "{file}: {:?}", fs.diagnostics);
        let got = listing(&fs);
        let path = format!("{}/tests/fixtures/{file}.defs", common::manifest_dir());
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            failures.push(format!("== {file}\n-- expected\n{want}-- got\n{got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_file_with_one_definition_names_its_chunk() {
    let text =
        "import os\n\n\ndef main(argv):\n    \"\"\"Run the tool.\"\"\"\n    return os.EX_OK\n";
    let fs = parse("tool.py", text);
    let c = &fs.chunks[0];
    assert_eq!(c.kind, ChunkKind::File);
    assert_eq!(c.symbol.as_deref(), Some("main"));
    assert_eq!(c.qualname.as_deref(), Some("main"));
    assert_eq!(c.signature.as_deref(), Some("def main(argv):"));
    assert_eq!(c.doc.as_deref(), Some("Run the tool."));

    let two = "def a():\n    pass\n\ndef b():\n    pass\n";
    let fs = parse("two.py", two);
    assert_eq!(fs.chunks[0].symbol, None);
    assert_eq!(fs.definitions.len(), 2);
}
