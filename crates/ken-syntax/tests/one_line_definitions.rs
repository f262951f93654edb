//! Every definition kind gets a chunk of its own, one-liners included: a
//! type alias, a one-line struct or interface, a macro. An exact look-up of
//! their name must find them, not a module chunk of hundreds of lines.
//! One file per language, large enough to be cut (> 3,000 characters).

mod common;

use common::*;
use ken_core::ChunkKind::{self, *};

/// (file, comment prefix, definitions as they are written, expected (name, kind)).
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, ChunkKind)],
);

const CASES: &[Case] = &[
    (
        "large.rs",
        "//",
        "pub type Result<T> = std::result::Result<T, Error>;\npub struct Marker;\npub trait Empty {}\npub enum Unit { One }\nmacro_rules! square { ($x:expr) => { $x * $x }; }\n",
        &[
            ("Result", Type),
            ("Marker", Struct),
            ("Empty", Trait),
            ("Unit", Enum),
            ("square", Macro),
        ],
    ),
    (
        "large.go",
        "//",
        "package server\n\ntype Middlewares []Func\ntype Alias = int\ntype Empty struct{}\ntype Runner interface{ Run() }\n",
        &[
            ("Middlewares", Type),
            ("Alias", Type),
            ("Empty", Struct),
            ("Runner", Interface),
        ],
    ),
    (
        "large.ts",
        "//",
        "export type Handler = (req: Request) => void;\nexport interface Empty {}\nexport enum Color { Red }\nexport class Marker {}\n",
        &[
            ("Handler", Type),
            ("Empty", Interface),
            ("Color", Enum),
            ("Marker", Class),
        ],
    ),
    (
        "large.js",
        "//",
        "class Marker {}\nexport class Empty {}\n",
        &[("Marker", Class), ("Empty", Class)],
    ),
    (
        "large.java",
        "//",
        "interface Marker {}\nenum Unit { ONE }\nrecord Point(int x, int y) {}\n",
        &[("Marker", Interface), ("Unit", Enum), ("Point", Class)],
    ),
    (
        "large.c",
        "//",
        "typedef unsigned long size_type;\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n",
        &[("size_type", Type), ("MAX", Macro)],
    ),
    (
        "large.cpp",
        "//",
        "using Callback = std::function<void(int)>;\ntypedef int Id;\n",
        &[("Callback", Type), ("Id", Type)],
    ),
    (
        "large.cs",
        "//",
        "public delegate void Handler(object sender);\npublic interface IMarker {}\npublic record Point(int X, int Y);\npublic enum Unit { One }\n",
        &[
            ("Handler", Type),
            ("IMarker", Interface),
            ("Point", Class),
            ("Unit", Enum),
        ],
    ),
    (
        "large.php",
        "//",
        "<?php\ninterface Marker {}\ntrait Empty {}\nclass Unit {}\n",
        &[("Marker", Interface), ("Empty", Trait), ("Unit", Class)],
    ),
    (
        "large.rb",
        "#",
        "class Marker; end\nclass Empty < StandardError; end\n",
        &[("Marker", Class), ("Empty", Class)],
    ),
    (
        "large.scala",
        "//",
        "type Callback = Int => Unit\ncase class Point(x: Int, y: Int)\ntrait Marker\n",
        &[("Callback", Type), ("Point", Class), ("Marker", Trait)],
    ),
    (
        "large.py",
        "#",
        "type Vector = list[float]\nclass Marker: pass\n",
        &[("Vector", Type), ("Marker", Class)],
    ),
];

#[test]
fn one_line_definitions_have_chunks_of_their_own_in_every_language() {
    for (file, comment, defs, expected) in CASES {
        // enough commentary to make the file large
        let mut text = String::new();
        if file.ends_with(".php") {
            text.push_str("<?php\n");
        }
        for i in 0..60 {
            text.push_str(&format!(
                "{comment} note {i}: the definitions below are short, the file is not.\n"
            ));
        }
        text.push('\n');
        text.push_str(defs.trim_start_matches("<?php\n"));
        assert!(text.len() > 3000, "{file} must be large");
        let fs = parse(file, &text);
        for (name, kind) in *expected {
            let chunk = fs
                .chunks
                .iter()
                .find(|c| c.symbol.as_deref() == Some(*name))
                .unwrap_or_else(|| {
                    let have: Vec<_> = fs
                        .chunks
                        .iter()
                        .map(|c| (c.kind, c.symbol.clone(), c.start_line, c.end_line))
                        .collect();
                    panic!("{file}: no chunk for `{name}`; chunks: {have:?}")
                });
            assert_eq!(chunk.kind, *kind, "{file}: `{name}`");
            assert_eq!(
                chunk.start_line, chunk.end_line,
                "{file}: `{name}` is one line"
            );
            assert!(
                chunk.text.lines().count() == 1,
                "{file}: `{name}`'s chunk is the definition alone: {:?}",
                chunk.text
            );
        }
    }
}
