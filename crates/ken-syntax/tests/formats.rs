//! Notebooks, Markdown, configuration, plain text, and the size rules
//! (skeletons, windows of huge definitions, module chunks).

mod common;

use common::*;
use ken_core::{ChunkKind, Language};
use ken_syntax::{ChunkOptions, parse_file};

fn notebook() -> String {
    serde_json::json!({
        "nbformat": 4,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "cells": [
            {"cell_type": "markdown", "source": ["# Analysis\n", "Some prose.\n"]},
            {"cell_type": "code", "source": ["%matplotlib inline\n", "import numpy as np\n", "import pandas as pd\n"],
             "outputs": [], "execution_count": 1},
            {"cell_type": "code",
             "source": "def load(path):\n    \"\"\"Load a CSV.\"\"\"\n    return pd.read_csv(path)\n\nclass Model:\n    def fit(self, df):\n        return df.mean()\n",
             "outputs": [{"output_type": "display_data",
                          "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
                                   "text/plain": ["<Figure size 640x480>"]}}],
             "execution_count": 2},
            {"cell_type": "code", "source": [], "outputs": []},
            {"cell_type": "raw", "source": "raw text"},
            {"cell_type": "code", "source": ["df = load('data.csv')\n", "!ls -la\n", "Model().fit(df)"],
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["SECRET OUTPUT\n"]}]}
        ]
    })
    .to_string()
}

#[test]
fn notebooks_keep_code_cells_only_with_their_numbers() {
    let text = notebook();
    let fs = parse("analysis.ipynb", &text);
    assert!(fs.diagnostics.is_empty(), "{:?}", fs.diagnostics);
    let cells: Vec<(Option<u32>, u32, u32)> = fs
        .chunks
        .iter()
        .map(|c| (c.cell, c.start_line, c.end_line))
        .collect();
    // code view: cell 1 = lines 1-3, blank, cell 2 = lines 5-11, blank, cell 5 = lines 13-15
    assert_eq!(
        cells,
        [(Some(1), 1, 3), (Some(2), 5, 11), (Some(5), 13, 15)]
    );
    for c in &fs.chunks {
        assert_eq!(
            (c.kind, c.language, c.synthetic),
            (ChunkKind::Cell, Language::Notebook, true)
        );
        for never in [
            "iVBOR",
            "SECRET OUTPUT",
            "Some prose",
            "raw text",
            "<Figure",
        ] {
            assert!(!c.text.contains(never), "{never} leaked into {:?}", c.text);
        }
    }
    assert_eq!(
        fs.chunks[0].text,
        "%matplotlib inline\nimport numpy as np\nimport pandas as pd"
    );
    let load = def(&fs, "load");
    assert_eq!((load.start_line, load.end_line), (5, 7));
    let fit = def(&fs, "Model.fit");
    assert_eq!(
        (fit.kind, fit.start_line, fit.end_line),
        (ChunkKind::Method, 10, 11)
    );
    assert_eq!(
        fs.chunks[2].text,
        "df = load('data.csv')\n!ls -la\nModel().fit(df)"
    );
}

#[test]
fn broken_notebooks_say_what_is_wrong_and_fall_back() {
    let cases = [
        ("{\"cells\": [", "not valid JSON"),
        ("[1, 2, 3]", "not a JSON object"),
        ("{\"cells\": 3}", "`cells` is not an array"),
        ("{\"metadata\": {}}", "no `cells`"),
    ];
    for (text, why) in cases {
        let fs = parse("broken.ipynb", text);
        assert!(
            fs.diagnostics.iter().any(|d| d.contains(why)),
            "{text}: {:?}",
            fs.diagnostics
        );
        assert!(
            fs.chunks.iter().all(|c| c.kind == ChunkKind::Window),
            "{text}"
        );
        assert!(!fs.chunks.is_empty(), "{text}");
    }
    // A malformed cell is skipped, the rest kept.
    let text = r#"{"cells": [{"cell_type": "code", "source": 42}, {"cell_type": "code", "source": "x = 1"}]}"#;
    let fs = parse("half.ipynb", text);
    assert_eq!(fs.chunks.len(), 1);
    assert_eq!(fs.chunks[0].cell, Some(1));
    assert!(fs.diagnostics.iter().any(|d| d.contains("cell 0")));
}

fn markdown() -> String {
    let mut md = String::from("Intro paragraph before any heading.\n\n");
    md.push_str("# Install\n\nRun the installer.\n\n```sh\n# this is a shell comment, not a heading\ncargo install ken\n```\n\n");
    md.push_str("Usage\n=====\n\n");
    md.push_str(&"Ken answers questions about code. ".repeat(60));
    md.push_str("\n\n## Configuration ##\n\nSet `KEN_HOME`.\n\n### Huge section\n\n");
    for i in 0..400 {
        md.push_str(&format!(
            "- item {i}: a line of text to make the section long\n"
        ));
    }
    md
}

#[test]
fn markdown_is_split_by_headings() {
    let text = markdown();
    let fs = parse("README.md", &text);
    let sections: Vec<Option<&str>> = fs.chunks.iter().map(|c| c.symbol.as_deref()).collect();
    let distinct: Vec<Option<&str>> = {
        let mut v = sections.clone();
        v.dedup();
        v
    };
    assert_eq!(
        distinct,
        [
            None,
            Some("Install"),
            Some("Usage"),
            Some("Configuration"),
            Some("Huge section")
        ]
    );
    assert!(
        fs.chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Section && c.qualname.is_none())
    );
    let install = &fs.chunks[1];
    assert!(install.text.starts_with("# Install") && install.text.contains("cargo install ken"));
    let usage = fs
        .chunks
        .iter()
        .find(|c| c.symbol.as_deref() == Some("Usage"))
        .unwrap();
    assert!(usage.text.starts_with("Usage\n====="));
    let huge: Vec<_> = fs
        .chunks
        .iter()
        .filter(|c| c.symbol.as_deref() == Some("Huge section"))
        .collect();
    assert!(huge.len() > 1, "a section over max_chunk_chars is windowed");
    assert!(huge.iter().all(|c| c.text.chars().count() <= 8000));
    check_no_line_lost("README.md", &text, &fs);

    let small = parse("small.md", "# Title\n\nShort.\n");
    assert_eq!(small.chunks.len(), 1);
    assert_eq!(small.chunks[0].kind, ChunkKind::File);
}

#[test]
fn configuration_files_are_whole_unless_huge() {
    let json = "{\n  \"name\": \"ken\",\n  \"version\": \"0.1.0\"\n}\n";
    let fs = parse("package.json", json);
    assert_eq!(fs.chunks.len(), 1);
    assert_eq!(
        (fs.chunks[0].kind, fs.chunks[0].text.as_str()),
        (ChunkKind::File, json)
    );

    // Between whole_file_chars and max_chunk_chars: still one chunk.
    let toml: String = (0..150)
        .map(|i| format!("key_{i} = \"value number {i}\"\n"))
        .collect();
    assert!(toml.len() > 3000 && toml.len() < 8000);
    let fs = parse("Cargo.toml", &toml);
    assert_eq!(fs.chunks.len(), 1);
    assert_eq!(fs.chunks[0].kind, ChunkKind::File);

    let yaml: String = (0..1000)
        .map(|i| format!("item_{i}: {{ id: {i}, name: thing }}\n"))
        .collect();
    let fs = parse("big.yaml", &yaml);
    assert!(fs.chunks.len() > 1);
    assert!(
        fs.chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Window && c.language == Language::Yaml)
    );
    check_no_line_lost("big.yaml", &yaml, &fs);
}

#[test]
fn unknown_languages_get_overlapping_line_windows() {
    let text: String = (1..=200)
        .map(|i| format!("line {i} of a log file\n"))
        .collect();
    let fs = parse("server.log", &text);
    let spans: Vec<(u32, u32)> = fs
        .chunks
        .iter()
        .map(|c| (c.start_line, c.end_line))
        .collect();
    assert_eq!(spans, [(1, 60), (51, 110), (101, 160), (151, 200)]);
    assert!(
        fs.chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Window && c.language == Language::Text)
    );

    let small = parse("Makefile", "all:\n\tcargo build\n");
    assert_eq!(small.chunks.len(), 1);
    assert_eq!(small.chunks[0].kind, ChunkKind::File);
}

/// A Python class over `max_chunk_chars` with `n` methods.
fn big_class(n: usize) -> String {
    let mut s = String::from(
        "import os\n\n\nclass Big:\n    \"\"\"A big class.\"\"\"\n\n    limit = 10\n\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "    def method_{i}(self, x):\n        \"\"\"Method {i}.\"\"\"\n{}        return x + {i}\n\n",
            "        x = os.path.join(str(x), 'part')\n".repeat(6)
        ));
    }
    s
}

#[test]
fn large_classes_become_skeletons_and_methods_stay_whole() {
    let text = big_class(30);
    assert!(text.len() > 8000 && text.len() < 24000);
    let fs = parse("big.py", &text);
    let class: Vec<_> = fs
        .chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Class)
        .collect();
    assert_eq!(class.len(), 1);
    let sk = class[0];
    assert!(sk.synthetic);
    assert!(
        sk.text
            .starts_with("class Big:\n    \"\"\"A big class.\"\"\"")
    );
    assert!(sk.text.contains("limit = 10"));
    for i in 0..30 {
        assert!(
            sk.text
                .contains(&format!("def method_{i}(self, x):\n        ...")),
            "{i}"
        );
        let m = chunk(&fs, &format!("Big.method_{i}"), ChunkKind::Method);
        assert!(!m.synthetic && m.text.contains(&format!("return x + {i}")));
    }
    assert!(!sk.text.contains("os.path.join"));
    let last_line = text.trim_end().lines().count() as u32;
    assert_eq!((sk.start_line, sk.end_line), (4, last_line));
    check_no_line_lost("big.py", &text, &fs);

    // A skeleton still larger than max_chunk_chars is itself windowed.
    let text = big_class(400);
    let fs = parse("huge.py", &text);
    let parts: Vec<_> = fs
        .chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Class)
        .collect();
    assert!(parts.len() > 1);
    assert!(
        parts
            .iter()
            .all(|c| c.synthetic && c.qualname.as_deref() == Some("Big"))
    );
    assert!(parts.iter().all(|c| c.text.len() <= 6000));
    assert!(parts.windows(2).all(|w| w[0].start_line <= w[1].start_line));
    assert!(parts.last().unwrap().text.contains("def method_399"));
}

#[test]
fn rust_impls_become_brace_skeletons() {
    let mut text = String::from("use std::fmt;\n\npub struct Big;\n\nimpl Big {\n");
    for i in 0..60 {
        text.push_str(&format!(
            "    /// Does step {i}.\n    pub fn step_{i}(&self, x: u32) -> u32 {{\n{}        x + {i}\n    }}\n\n",
            "        let x = x.wrapping_mul(3).rotate_left(1);\n".repeat(3)
        ));
    }
    text.push_str("}\n");
    let fs = parse("big.rs", &text);
    let sk = chunk(&fs, "Big", ChunkKind::Impl);
    assert!(sk.synthetic);
    assert!(
        sk.text
            .contains("    /// Does step 7.\n    pub fn step_7(&self, x: u32) -> u32 { ... }")
    );
    assert_eq!(
        chunk(&fs, "Big.step_59", ChunkKind::Method).doc.as_deref(),
        Some("Does step 59.")
    );
}

#[test]
fn huge_functions_are_windows_that_carry_their_symbol() {
    let mut text = String::from(
        "import sys\n\n\ndef generated_table(x):\n    \"\"\"A huge generated function.\"\"\"\n",
    );
    for i in 0..1200 {
        text.push_str(&format!("    if x == {i}:\n        return {}\n", i * 7));
    }
    text.push_str("    return None\n\n\ndef small():\n    return 1\n");
    assert!(text.len() > 24000);
    let fs = parse("gen.py", &text);
    let parts: Vec<_> = fs
        .chunks
        .iter()
        .filter(|c| c.qualname.as_deref() == Some("generated_table"))
        .collect();
    assert!(parts.len() > 2);
    for p in &parts {
        assert_eq!(
            (p.kind, p.symbol.as_deref()),
            (ChunkKind::Function, Some("generated_table"))
        );
        assert_eq!(p.signature.as_deref(), Some("def generated_table(x):"));
        assert!(!p.synthetic && p.text.len() <= 6000);
    }
    let d = def(&fs, "generated_table");
    assert_eq!(parts.first().unwrap().start_line, d.start_line);
    assert_eq!(parts.last().unwrap().end_line, d.end_line);
    assert!(
        parts
            .windows(2)
            .all(|w| w[1].start_line <= w[0].end_line + 1),
        "windows cover it"
    );
    chunk(&fs, "small", ChunkKind::Function);
    check_no_line_lost("gen.py", &text, &fs);
}

#[test]
fn a_large_script_without_definitions_is_module_chunks() {
    let text: String = (0..600)
        .map(|i| format!("echo \"step {i}\" && run_step {i} --verbose\n"))
        .collect();
    let fs = parse("steps.sh", &text);
    assert!(fs.chunks.len() > 1);
    assert!(
        fs.chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Module && c.text.chars().count() <= 8000)
    );
    check_no_line_lost("steps.sh", &text, &fs);
}

#[test]
fn options_are_respected() {
    // module-level statements between definitions: short gaps to group
    let mut text = fixture("large.go");
    for i in 0..20 {
        text.push_str(&format!("\nvar tail{i} = {i}\n\nfunc tailFunc{i}() {{}}\n"));
    }
    let opts = ChunkOptions {
        whole_file_chars: 100,
        max_chunk_chars: 200,
        ..ChunkOptions::default()
    };
    let fs = parse_file("x.go", &text, &opts);
    check_invariants("x.go", &text, &fs);
    let module: Vec<_> = fs
        .chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Module)
        .collect();
    assert!(
        module.len() > 1,
        "module text is grouped by max_chunk_chars"
    );
    assert!(
        module
            .iter()
            .filter(|c| c.text.contains("tail"))
            .all(|c| c.text.chars().count() <= 200),
        "each group within max_chunk_chars"
    );
    assert!(
        !chunk(&fs, "Command", ChunkKind::Struct).synthetic,
        "nothing to elide: whole"
    );
}
