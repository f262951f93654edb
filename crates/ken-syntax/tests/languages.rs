//! One realistic file (> 3,000 characters) per tree-sitter language, each
//! checked against the same expectations: definitions are never cut, class
//! and methods are chunks, the module chunk holds the imports, qualified
//! names, doc comments, trivial bodies. Adding a language is adding a row.

mod common;

use common::*;
use ken_core::ChunkKind::{self, *};

struct Case {
    file: &'static str,
    /// Text the module chunk must hold (imports, constants, statements).
    module: &'static [&'static str],
    /// Definitions with a chunk of their own, holding all of them.
    chunks: &'static [(&'static str, ChunkKind)],
    /// Definitions reported without a chunk of their own.
    nested: &'static [&'static str],
    /// (qualname, name) where the two differ in an interesting way.
    names: &'static [(&'static str, &'static str)],
    /// (qualname, text in its doc).
    docs: &'static [(&'static str, &'static str)],
    trivial: &'static [&'static str],
    not_trivial: &'static [&'static str],
    /// (qualname, first line of the definition, first line of its chunk).
    starts: &'static [(&'static str, &'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        file: "large.py",
        module: &[
            "import threading",
            "DEFAULT_PORT = 5000",
            "if __name__ == \"__main__\":",
        ],
        chunks: &[
            ("DispatchingApp", Class),
            ("DispatchingApp.__init__", Method),
            ("DispatchingApp._load_in_background", Method),
            ("with_appcontext", Function),
            ("find_best_app", Function),
            ("prepare_import", Function),
        ],
        nested: &[
            "DispatchingApp._load_in_background._load_app",
            "with_appcontext.decorator",
        ],
        names: &[("DispatchingApp._load_in_background._load_app", "_load_app")],
        docs: &[
            ("DispatchingApp", "dispatches to a Flask application"),
            ("find_best_app", "best possible\napplication"),
        ],
        trivial: &[
            "DispatchingApp.reset",
            "DispatchingApp.placeholder",
            "NoAppException",
        ],
        not_trivial: &[
            "DispatchingApp.__call__",
            "prepare_import",
            "DispatchingApp",
        ],
        starts: &[(
            "with_appcontext",
            "@update_wrapper",
            "# Helpers for the command line interface.",
        )],
    },
    Case {
        file: "large.rs",
        module: &["use std::cmp;", "pub const DEFAULT_BUFFER_CAPACITY"],
        chunks: &[
            ("Result", Type),
            ("Core", Struct),
            ("Core", Impl),
            ("Core.new", Method),
            ("Core.before_context_by_line", Method),
            ("Hidden", Trait),
            ("Hidden.describe", Method),
            ("is_hidden_entry", Function),
            ("assert_matches", Macro),
            ("tests", Namespace),
            ("tests.buffer_basics2", Function),
        ],
        nested: &["is_hidden_entry.imp", "Hidden.is_hidden"],
        names: &[("Core.before_context_by_line", "before_context_by_line")],
        docs: &[
            ("Core", "The state of one search"),
            ("Core.new", "Create a new core"),
            ("is_hidden_entry", "considered to be hidden"),
        ],
        trivial: &["Core.reset_stats"],
        not_trivial: &["Core.before_context_by_line", "Hidden.describe"],
        starts: &[
            (
                "FastMatchResult",
                "enum FastMatchResult {",
                "/// Whether a fast path applies.",
            ),
            ("tests", "mod tests {", "#[cfg(test)]"),
        ],
    },
    Case {
        file: "large.js",
        module: &[
            "var http = require('http');",
            "module.exports = res;",
            "exports.View = View;",
        ],
        chunks: &[
            ("res.status", Function),
            ("res.send", Function),
            ("res.sendFile", Function),
            ("stringify", Function),
            ("View", Class),
            ("View.lookup", Method),
        ],
        nested: &["res.sendFile.onaborted", "res.sendFile.onend"],
        names: &[
            ("res.send", "send"),
            ("exports.noop", "noop"),
            ("res.sendFile.onend", "onend"),
        ],
        docs: &[
            ("res.send", "Send a response."),
            ("View.lookup", "Lookup view by the given"),
        ],
        trivial: &["exports.noop", "View.render"],
        not_trivial: &["res.send", "View.lookup"],
        starts: &[("res.send", "res.send = function send(body) {", "/**")],
    },
    Case {
        file: "large.ts",
        module: &[
            "import { EventEmitter }",
            "export const DEFAULT_TIMEOUT_MS",
            "export default router;",
        ],
        chunks: &[
            ("Service", Interface),
            ("Router", Class),
            ("Router.add", Method),
            ("Router.dispatch", Method),
            ("Store", Class),
            ("Store.getOrThrow", Method),
            ("parseHeader", Function),
            ("retry", Function),
            ("joinPaths", Function),
            ("Internal", Namespace),
            ("Handler", Type),
        ],
        nested: &["Service.start", "Store.get"],
        names: &[("Internal.normalize", "normalize")],
        docs: &[
            ("Router", "Routes requests to handlers"),
            ("Router.add", "Register `handler`"),
        ],
        trivial: &["Router.start", "Router.stop"],
        not_trivial: &["Router.dispatch", "joinPaths"],
        starts: &[(
            "joinPaths",
            "export const joinPaths = (...parts: string[]): string =>",
            "export const joinPaths = (...parts: string[]): string =>",
        )],
    },
    Case {
        file: "large.tsx",
        module: &["import React", "export const PAGE_SIZE = 25;"],
        chunks: &[
            ("State", Type),
            ("ItemList", Function),
            ("Spinner", Function),
            ("relativeTime", Function),
            ("Counter", Class),
            ("Counter.increment", Method),
            ("Counter.undo", Method),
            ("Counter.render", Method),
            ("App", Function),
        ],
        nested: &[],
        names: &[],
        docs: &[
            ("ItemList", "A paginated list"),
            ("Spinner", "spinner until"),
        ],
        trivial: &["Counter.componentWillUnmount"],
        not_trivial: &["Counter.render", "ItemList"],
        starts: &[],
    },
    Case {
        file: "large.go",
        module: &[
            "package cobra",
            "\"strings\"",
            "var EnablePrefixMatching = false",
            "defaultUsageTemplate",
        ],
        chunks: &[
            ("Command", Struct),
            ("Flagger", Interface),
            ("Command.AddCommand", Method),
            ("Command.Find", Method),
            ("ExactArgs", Function),
            ("stripFlags", Function),
        ],
        nested: &["Flagger.Flags", "Flagger.HasFlags"],
        names: &[("Command.AddCommand", "AddCommand")],
        docs: &[
            ("Command.AddCommand", "AddCommand adds one or more commands"),
            ("Command", "Command is just that"),
        ],
        trivial: &["Command.Deprecated"],
        not_trivial: &["Command.Name", "Command.Find"],
        starts: &[(
            "Command",
            "type Command struct {",
            "// Command is just that, a command for your application.",
        )],
    },
    Case {
        file: "large.java",
        module: &["package com.example.store;", "import java.util.Map;"],
        chunks: &[
            ("Repository", Interface),
            ("Repository.exists", Method),
            ("MemoryRepository", Class),
            ("MemoryRepository.find", Method),
            ("MemoryRepository.save", Method),
            ("MemoryRepository.copyTo", Method),
            ("MemoryRepository.Change", Enum),
            ("MemoryRepository.Change.isDestructive", Method),
            ("Main.main", Method),
        ],
        nested: &["Repository.find", "Auditor.record"],
        names: &[],
        docs: &[
            ("MemoryRepository.find", "Finds a record by id."),
            ("MemoryRepository", "in-memory repository"),
        ],
        trivial: &["MemoryRepository.close"],
        not_trivial: &["MemoryRepository.save"],
        starts: &[("MemoryRepository.find", "@Override", "/**")],
    },
    Case {
        file: "large.c",
        module: &[
            "#include <stdio.h>",
            "#define BUFFER_MIN_CAPACITY 64",
            "static int debug_level = 0;",
        ],
        chunks: &[
            ("buffer_t", Type),
            ("MAX", Macro),
            ("buffer", Struct),
            ("buf_status", Type),
            ("buffer_new", Function),
            ("buffer_reserve", Function),
            ("buffer_find", Function),
            ("main", Function),
        ],
        nested: &[],
        names: &[],
        docs: &[
            ("buffer_new", "Create an empty buffer"),
            ("buffer_reserve", "Make sure `extra` more bytes fit."),
        ],
        trivial: &["buffer_stats"],
        not_trivial: &["buffer_find"],
        starts: &[("buffer_new", "buffer_t *buffer_new(size_t cap)", "/**")],
    },
    Case {
        file: "large.cpp",
        module: &["#include <unordered_map>", "namespace {"],
        chunks: &[
            ("cache", Namespace),
            ("cache.LruCache", Class),
            ("cache.LruCache.get", Method),
            ("cache.LruCache.put", Method),
            ("cache.Stats", Struct),
            ("cache.Stats.hit_rate", Method),
            ("cache.get_or", Function),
            ("cache.split_key", Function),
            ("count_prefix", Function),
            ("main", Function),
        ],
        nested: &[],
        names: &[("cache.LruCache.put", "put")],
        docs: &[
            ("cache.LruCache", "evicts the least recently used"),
            ("cache.split_key", "Splits `key`"),
        ],
        trivial: &["cache.LruCache.on_evict"],
        not_trivial: &["cache.LruCache.put"],
        starts: &[(
            "cache.get_or",
            "template <typename K, typename V>",
            "template <typename K, typename V>",
        )],
    },
    Case {
        file: "large.cs",
        module: &["using System.Linq;"],
        chunks: &[
            ("Acme.Billing", Namespace),
            ("IInvoicer", Interface),
            ("Plan", Enum),
            ("Invoicer", Class),
            ("Invoicer.Build", Method),
            ("Invoicer.Describe", Method),
            ("Program.Main", Method),
        ],
        nested: &[
            "IInvoicer.Build",
            "Usage",
            "Exporter.Export",
            "Invoicer.Describe.Money",
        ],
        names: &[],
        docs: &[
            ("Invoicer", "The default invoicer"),
            ("Invoicer.Build", "Builds the invoice of one customer"),
        ],
        trivial: &["Invoicer.Reset"],
        not_trivial: &["Invoicer.Build"],
        starts: &[("Invoicer", "[Serializable]", "/// <summary>")],
    },
    Case {
        file: "large.rb",
        module: &[
            "require \"json\"",
            "DEFAULT_TTL = 300",
            "if $PROGRAM_NAME == __FILE__",
        ],
        chunks: &[
            ("Cache", Namespace),
            ("Cache.TtlStore", Class),
            ("Cache.TtlStore.fetch", Method),
            ("Cache.TtlStore.prune", Method),
            ("Cache.decode", Method),
            ("Cache.Client", Class),
            ("Cache.Client.get", Method),
            ("with_retries", Function),
            ("log_line", Function),
        ],
        nested: &["Cache.DecodeError"],
        names: &[("Cache.Client", "Client")],
        docs: &[
            ("Cache.TtlStore.fetch", "computing and storing it"),
            ("Cache.TtlStore", "forgets entries"),
        ],
        trivial: &["Cache.TtlStore.clear"],
        not_trivial: &["Cache.TtlStore.prune"],
        starts: &[],
    },
    Case {
        file: "large.php",
        module: &[
            "namespace App\\Http\\Controllers;",
            "use Illuminate\\Http\\Request;",
            "const MAX_PAGE_SIZE = 100;",
        ],
        chunks: &[
            ("Authorizer", Interface),
            ("Paginates", Trait),
            ("UserController", Class),
            ("UserController.index", Method),
            ("UserController.changePassword", Method),
            ("Role", Enum),
            ("Role.label", Method),
            ("slugify", Function),
            ("human_bytes", Function),
        ],
        nested: &["Authorizer.allows", "Controller.name"],
        names: &[],
        docs: &[
            ("UserController.index", "List users, newest first."),
            ("human_bytes", "Format a byte count"),
        ],
        trivial: &["UserController.destroy"],
        not_trivial: &["UserController.index"],
        starts: &[],
    },
    Case {
        file: "large.sh",
        module: &[
            "set -euo pipefail",
            "VERSION=\"${1:-}\"",
            "trap cleanup EXIT",
            "for target in",
        ],
        chunks: &[
            ("die", Function),
            ("check_preconditions", Function),
            ("build_target", Function),
            ("verify_archive", Function),
            ("publish", Function),
        ],
        nested: &[],
        names: &[],
        docs: &[
            ("die", "Print a message to stderr"),
            ("build_target", "Build one target"),
        ],
        trivial: &["post_release"],
        not_trivial: &["checksums"],
        starts: &[("die", "die() {", "# Print a message to stderr and exit.")],
    },
    Case {
        file: "large.scala",
        module: &[
            "package com.example.graph",
            "import scala.collection.mutable",
        ],
        chunks: &[
            ("NodeId", Type),
            ("Edge", Class),
            ("Graph", Trait),
            ("AdjacencyGraph", Class),
            ("AdjacencyGraph.addEdge", Method),
            ("AdjacencyGraph.successors", Method),
            ("AdjacencyGraph.topologicalOrder", Method),
            ("Graphs", Namespace),
            ("Graphs.chain", Method),
            ("Graphs.components", Method),
            ("Color", Enum),
        ],
        nested: &[
            "Graphs.chain.loop",
            "Graphs.components.visit",
            "Graph.successors",
        ],
        names: &[],
        docs: &[
            ("AdjacencyGraph", "adjacency lists"),
            ("Graphs.chain", "Follows single successors"),
        ],
        trivial: &["AdjacencyGraph.shortestPath"],
        not_trivial: &["AdjacencyGraph.topologicalOrder"],
        starts: &[],
    },
];

fn check(case: &Case) {
    let text = fixture(case.file);
    assert!(
        text.chars().count() > 3000,
        "{}: fixture too small for the large-file rule",
        case.file
    );
    let fs = parse(case.file, &text);
    let f = case.file;
    check_no_line_lost(f, &text, &fs);
    assert!(fs.diagnostics.is_empty(), "{f}: {:?}", fs.diagnostics);

    // The module chunk holds what is outside the top-level definitions.
    let module: Vec<_> = fs.chunks.iter().filter(|c| c.kind == Module).collect();
    assert!(!module.is_empty(), "{f}: no module chunk");
    assert!(module.iter().all(|c| c.synthetic), "{f}");
    for m in case.module {
        assert!(
            module.iter().any(|c| c.text.contains(m)),
            "{f}: {m:?} not in the module chunk"
        );
    }

    // Every definition is inside a chunk; chunks of definitions hold them whole.
    for d in &fs.definitions {
        assert!(
            fs.chunks
                .iter()
                .any(|c| c.start_line <= d.start_line && d.end_line <= c.end_line),
            "{f}: {} is in no chunk",
            d.qualname
        );
    }
    for (q, kind) in case.chunks {
        let c = chunk(&fs, q, *kind);
        assert!(!c.synthetic, "{f}: {q} should be whole");
        let d = fs
            .definitions
            .iter()
            .find(|d| {
                &d.qualname == q
                    && d.kind == *kind
                    && c.start_line <= d.start_line
                    && c.end_line == d.end_line
            })
            .unwrap_or_else(|| {
                panic!(
                    "{f}: no {kind} definition {q} spanning chunk {}-{}: {:#?}",
                    c.start_line,
                    c.end_line,
                    defs(&fs)
                )
            });
        assert!(
            c.text
                .contains(lines(&text, d.start_line, d.end_line).trim_start()),
            "{f}: {q} cut"
        );
        assert_eq!(c.symbol.as_deref(), Some(d.name.as_str()), "{f}: {q}");
        assert!(c.signature.is_some(), "{f}: {q} has no signature");
    }
    for q in case.nested {
        def(&fs, q);
        assert!(
            chunk_named(&fs, q).is_none(),
            "{f}: {q} should have no chunk of its own"
        );
    }
    for (q, name) in case.names {
        assert_eq!(def(&fs, q).name, *name, "{f}: {q}");
    }
    for (q, doc) in case.docs {
        let c = chunk_named(&fs, q).unwrap_or_else(|| panic!("{f}: no chunk {q}"));
        let got = c.doc.as_deref().unwrap_or("");
        assert!(
            got.contains(doc),
            "{f}: doc of {q} is {got:?}, expected {doc:?}"
        );
        assert!(
            !got.starts_with("//") && !got.starts_with("/*") && !got.starts_with('#'),
            "{f}: {got:?}"
        );
    }
    for q in case.trivial {
        let c = chunk_named(&fs, q).unwrap_or_else(|| panic!("{f}: no chunk {q}"));
        assert!(c.trivial, "{f}: {q} should be trivial");
    }
    for q in case.not_trivial {
        let c = chunk_named(&fs, q).unwrap_or_else(|| panic!("{f}: no chunk {q}"));
        assert!(!c.trivial, "{f}: {q} should not be trivial");
    }
    for (q, def_line, chunk_line) in case.starts {
        let d = def(&fs, q);
        assert_eq!(
            lines(&text, d.start_line, d.start_line).trim(),
            *def_line,
            "{f}: {q} starts"
        );
        let c = chunk_named(&fs, q).unwrap();
        assert_eq!(
            lines(&text, c.start_line, c.start_line).trim(),
            *chunk_line,
            "{f}: chunk of {q}"
        );
    }
    // Kinds: functions in class-like definitions are methods, others not.
    for d in &fs.definitions {
        if d.kind == Method {
            assert!(
                d.qualname.contains('.'),
                "{f}: method {} has no owner",
                d.qualname
            );
        }
    }
}

macro_rules! language_tests {
    ($($name:ident => $file:literal,)*) => {$(
        #[test]
        fn $name() {
            let case = CASES.iter().find(|c| c.file == $file).expect("a case");
            check(case);
        }
    )*};
}

language_tests! {
    python => "large.py",
    rust => "large.rs",
    javascript => "large.js",
    typescript => "large.ts",
    tsx => "large.tsx",
    go => "large.go",
    java => "large.java",
    c => "large.c",
    cpp => "large.cpp",
    csharp => "large.cs",
    ruby => "large.rb",
    php => "large.php",
    bash => "large.sh",
    scala => "large.scala",
}

#[test]
fn every_case_has_a_test() {
    assert_eq!(CASES.len(), 14);
}

/// The same files, made small: one `File` chunk, definitions still listed.
#[test]
fn small_files_are_one_chunk_with_all_definitions() {
    for case in CASES {
        let text = fixture(case.file);
        let opts = ken_syntax::ChunkOptions {
            whole_file_chars: 100_000,
            ..Default::default()
        };
        let fs = ken_syntax::parse_file(case.file, &text, &opts);
        check_invariants(case.file, &text, &fs);
        assert_eq!(fs.chunks.len(), 1, "{}", case.file);
        assert_eq!(fs.chunks[0].kind, File);
        assert_eq!(fs.chunks[0].text, text);
        let large = parse(case.file, &text);
        assert_eq!(fs.definitions, large.definitions, "{}", case.file);
    }
}
