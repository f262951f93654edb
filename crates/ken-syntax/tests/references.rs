//! References (calls, imports, inheritance, type uses) in every language:
//! one realistic fixture each under `tests/fixtures/refs/`, with the
//! references expected from it written out by hand below. A reference is
//! written `kind line qualifier :: name <- from` (`-` for module level; no
//! `qualifier ::` when there is none). Every expected reference must be
//! found; those under `absent` must not be.

mod common;

use common::*;
use ken_core::{FileSyntax, Language, RefKind, Reference};
use ken_syntax::{ChunkOptions, parse_file};

struct Case {
    file: &'static str,
    expected: &'static [&'static str],
    absent: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        file: "refs.py",
        expected: &[
            "import 2 os.path :: path <- -",
            "import 3 json :: j <- -",
            "import 4 .config :: Config <- -",
            "import 4 .config :: load as load_config <- -",
            "import 5 ..base :: * <- -",
            "call 10 self :: step <- Base.run",
            "inherit 13 Base <- App",
            "type 14 str <- App.__init__",
            "type 14 Config <- App.__init__",
            "call 15 super() :: __init__ <- App.__init__",
            "call 15 super <- App.__init__",
            "call 16 load_config <- App.__init__",
            "call 18 property <- App.root",
            "type 19 os :: PathLike <- App.root",
            "call 20 os.path :: dirname <- App.root",
            "call 23 j :: loads <- App.step",
            "call 23 self :: read <- App.step",
            "call 24 helper() :: strip <- App.step",
            "call 24 helper <- App.step",
            "call 28 str <- helper",
            "call 31 App <- -",
        ],
        absent: &["inherit 13 Meta <- App", "type 14 name <- App.__init__"],
    },
    Case {
        file: "refs.rs",
        expected: &[
            "import 2 std :: io <- -",
            "import 2 std::io :: Write <- -",
            "import 3 crate::sink :: Sink <- -",
            "import 3 crate::sink :: SinkContext <- -",
            "import 4 super::walk :: * <- -",
            "inherit 6 Clone <- Matcher",
            "inherit 6 fmt :: Debug <- Matcher",
            "type 7 Option <- Matcher.find",
            "type 10 Matcher <- Searcher",
            "type 12 Config <- Searcher",
            "type 15 Searcher <- Searcher",
            "type 16 Searcher <- Searcher.new",
            "call 17 Config :: default <- Searcher.new",
            "type 18 Searcher <- Searcher.new",
            "type 21 Sink <- Searcher.search",
            "type 21 io :: Result <- Searcher.search",
            "call 22 self.matcher.find() :: unwrap_or <- Searcher.search",
            "call 22 self.matcher :: find <- Searcher.search",
            "call 23 sink :: matched <- Searcher.search",
            "call 24 writeln <- Searcher.search",
            "call 24 io :: stdout <- Searcher.search",
            "call 25 assert_eq <- Searcher.search",
            "call 25 count_lines <- Searcher.search",
            "call 26 Ok <- Searcher.search",
            "inherit 30 std::fmt :: Display <- Config",
            "type 30 Config <- Config",
            "type 31 std::fmt :: Formatter <- Config.fmt",
            "type 31 std::fmt :: Result <- Config.fmt",
            "call 32 crate::util :: write_config <- Config.fmt",
            "call 37 bytes.iter().filter() :: count <- count_lines",
            "call 37 bytes.iter() :: filter <- count_lines",
            "call 37 bytes :: iter <- count_lines",
        ],
        absent: &[
            "type 10 Searcher <- Searcher",
            "type 10 M <- Searcher",
            "type 30 std::fmt :: Display <- Config",
        ],
    },
    Case {
        file: "refs.js",
        expected: &[
            "import 3 debug :: debug <- -",
            "import 4 ./view :: View <- -",
            "import 5 path :: path <- -",
            "import 6 ./router :: Router <- -",
            "import 6 ./router :: Route as R <- -",
            "import 7 ./utils :: utils <- -",
            "inherit 9 EventEmitter <- Application",
            "call 11 super <- Application.constructor",
            "call 12 Router <- Application.constructor",
            "call 16 View <- Application.render",
            "call 16 join <- Application.render",
            "call 17 view :: render <- Application.render",
            "call 17 utils :: merge <- Application.render",
            "call 22 http :: createServer <- app.listen",
            "call 23 server.listen :: apply <- app.listen",
        ],
        absent: &["call 3 require <- -", "call 4 require <- -"],
    },
    Case {
        file: "refs.ts",
        expected: &[
            "import 1 events :: EventEmitter <- -",
            "import 2 ./http :: Request <- -",
            "import 2 ./http :: Response <- -",
            "inherit 4 Callable <- Handler",
            "type 5 Request <- Handler.handle",
            "type 5 Promise <- Handler.handle",
            "type 5 Response <- Handler.handle",
            "inherit 8 EventEmitter <- Router",
            "inherit 8 Handler <- Router",
            "inherit 8 Disposable <- Router",
            "type 9 Map <- Router",
            "type 9 Handler <- Router",
            "call 9 Map <- Router",
            "type 11 Request <- Router.handle",
            "call 12 this.routes :: get <- Router.handle",
            "call 13 h.handle() :: then <- Router.handle",
            "call 13 h :: handle <- Router.handle",
            "type 17 Response <- normalize",
            "call 18 http.Status :: ok <- normalize",
        ],
        absent: &["type 4 Handler <- Handler", "type 8 Router <- Router"],
    },
    Case {
        file: "refs.tsx",
        expected: &[
            "import 1 react :: React <- -",
            "import 1 react :: useState <- -",
            "import 2 ./api :: fetchItems <- -",
            "import 2 ./api :: Item <- -",
            "type 5 Item <- Props",
            "type 8 Props <- ItemList",
            "call 9 useState <- ItemList",
            "call 10 setPage <- ItemList",
            "call 10 items :: map <- ItemList",
            "inherit 13 React :: Component <- Counter",
            "call 15 fetchItems() :: then <- Counter.load",
            "call 15 fetchItems <- Counter.load",
            "type 15 Item <- Counter.load",
            "call 15 this :: setState <- Counter.load",
        ],
        absent: &[],
    },
    Case {
        file: "refs.go",
        expected: &[
            "import 4 fmt :: fmt <- -",
            "import 5 github.com/spf13/pflag :: flag <- -",
            "import 6 strings :: strings <- -",
            "inherit 11 Base <- Command",
            "inherit 12 io :: Writer <- Command",
            "type 14 Command <- Command",
            "type 15 flag :: FlagSet <- Command",
            "inherit 19 fmt :: Stringer <- Flagger",
            "type 20 flag :: FlagSet <- Flagger.Flags",
            "type 24 Command <- Command.AddCommand",
            "call 27 append <- Command.AddCommand",
            "call 29 fmt :: Println <- Command.AddCommand",
            "call 29 strings :: ToUpper <- Command.AddCommand",
            "call 29 c :: Name <- Command.AddCommand",
            "call 33 NewName() :: String <- Command.Name",
            "call 33 NewName <- Command.Name",
        ],
        absent: &[
            "type 10 Command <- Command",
            "type 13 string <- Command",
            "type 11 Base <- Command",
        ],
    },
    Case {
        file: "refs.java",
        expected: &[
            "import 3 java.util :: HashMap <- -",
            "import 4 java.util :: * <- -",
            "import 5 java.util.Objects :: requireNonNull <- -",
            "inherit 7 AbstractRepository <- MemoryRepository",
            "inherit 7 Repository <- MemoryRepository",
            "inherit 7 Closeable <- MemoryRepository",
            "type 8 Map <- MemoryRepository",
            "type 8 String <- MemoryRepository",
            "call 8 HashMap <- MemoryRepository",
            "type 10 Config <- MemoryRepository.MemoryRepository",
            "call 12 requireNonNull <- MemoryRepository.MemoryRepository",
            "type 16 Optional <- MemoryRepository.find",
            "call 17 Optional :: ofNullable <- MemoryRepository.find",
            "call 17 this.records :: get <- MemoryRepository.find",
            "call 21 validate <- MemoryRepository.save",
            "call 22 records :: put <- MemoryRepository.save",
            "call 23 Logger.getLogger() :: info <- MemoryRepository.save",
            "call 23 Logger :: getLogger <- MemoryRepository.save",
            "inherit 27 Base <- Repository",
            "type 28 Optional <- Repository.find",
        ],
        absent: &[
            "type 7 T <- MemoryRepository",
            "type 8 HashMap <- MemoryRepository",
        ],
    },
    Case {
        file: "refs.c",
        expected: &[
            "import 1 stdio.h :: stdio.h <- -",
            "import 2 util/buffer.h :: buffer.h <- -",
            "type 9 buffer_t <- buffer_new",
            "call 10 malloc <- buffer_new",
            "type 10 buffer_t <- buffer_new",
            "call 11 xalloc <- buffer_new",
            "call 16 buffer_new <- main",
            "call 17 printf <- main",
            "call 18 b->ops :: flush <- main",
        ],
        absent: &["type 7 buffer_t <- buffer_t"],
    },
    Case {
        file: "refs.cpp",
        expected: &[
            "import 1 string :: string <- -",
            "import 2 cache/lru.hpp :: lru.hpp <- -",
            "import 4 std :: string <- -",
            "import 5 cache :: * <- -",
            "inherit 9 Base <- app.Service",
            "inherit 9 util :: NonCopyable <- app.Service",
            "type 11 Config <- app.Service.Service",
            "type 12 std :: string <- app.Service.name",
            "type 14 Store <- app.Service",
            "type 17 Config <- app.Service.Service",
            "call 17 Store <- app.Service.Service",
            "call 18 store_ :: open <- app.Service.Service",
            "call 19 util :: log <- app.Service.Service",
            "type 22 std :: string <- app.Service.name",
            "call 23 format_name <- app.Service.name",
            "call 23 store_ :: id <- app.Service.name",
        ],
        absent: &[
            "type 9 Service <- app.Service",
            "inherit 9 public <- app.Service",
        ],
    },
    Case {
        file: "refs.cs",
        expected: &[
            "import 1 System :: System <- -",
            "import 2 System.Collections.Generic :: Generic <- -",
            "import 3 Newtonsoft.Json :: Json <- -",
            "inherit 7 InvoicerBase <- Invoicer",
            "inherit 7 IInvoicer <- Invoicer",
            "type 9 IDictionary <- Invoicer",
            "type 9 Plan <- Invoicer",
            "type 11 IDictionary <- Invoicer.Invoicer",
            "call 13 ArgumentNullException <- Invoicer.Invoicer",
            "call 13 nameof <- Invoicer.Invoicer",
            "type 16 Invoice <- Invoicer.Build",
            "type 16 Customer <- Invoicer.Build",
            "call 18 List <- Invoicer.Build",
            "call 19 lines :: Add <- Invoicer.Build",
            "call 19 MakeLine <- Invoicer.Build",
            "call 20 Invoice <- Invoicer.Build",
            "type 23 InvoiceLine <- Invoicer.MakeLine",
            "call 23 Pricing :: Line <- Invoicer.MakeLine",
        ],
        absent: &[
            "type 18 var <- Invoicer.Build",
            "type 16 Build <- Invoicer.Build",
        ],
    },
    Case {
        file: "refs.rb",
        expected: &[
            "import 1 json :: json <- -",
            "import 2 ../lib/cache/store :: store <- -",
            "inherit 5 Base :: Store <- Cache.TtlStore",
            "inherit 6 Comparable <- Cache.TtlStore",
            "inherit 7 Forwardable <- Cache.TtlStore",
            "call 11 Clock :: new <- Cache.TtlStore.initialize",
            "call 17 @entries :: fetch <- Cache.TtlStore.fetch",
            "call 17 load_entry <- Cache.TtlStore.fetch",
            "call 18 JSON :: parse <- Cache.TtlStore.fetch",
            "call 18 entry :: value <- Cache.TtlStore.fetch",
        ],
        absent: &["call 1 require <- -", "call 6 include <- Cache.TtlStore"],
    },
    Case {
        file: "refs.php",
        expected: &[
            "import 5 App\\Models :: User <- -",
            "import 6 Illuminate\\Support\\Facades :: Hash <- -",
            "import 6 Illuminate\\Support\\Facades :: Log <- -",
            "import 7 /helpers.php :: helpers <- -",
            "inherit 9 Controller <- UserController",
            "inherit 9 Authorizable <- UserController",
            "inherit 11 Paginates <- UserController",
            "type 13 Request <- UserController.show",
            "type 13 Response <- UserController.show",
            "call 15 User :: findOrFail <- UserController.show",
            "call 16 $this :: authorize <- UserController.show",
            "call 17 Log :: info <- UserController.show",
            "call 17 format_user <- UserController.show",
            "call 18 Response <- UserController.show",
            "call 18 $user :: toArray <- UserController.show",
        ],
        absent: &[],
    },
    Case {
        file: "refs.sh",
        expected: &[
            "call 2 set <- -",
            "import 3 ./lib/common.sh :: common <- -",
            "import 4 $ROOT/env.sh :: env <- -",
            "call 7 echo <- die",
            "call 8 exit <- die",
            "call 12 log <- build",
            "call 13 cargo <- build",
            "call 13 die <- build",
            "call 16 build <- -",
        ],
        absent: &["call 3 source <- -"],
    },
    Case {
        file: "refs.scala",
        expected: &[
            "import 3 scala.collection :: mutable <- -",
            "import 4 scala.util :: Try <- -",
            "import 4 scala.util :: Success <- -",
            "import 5 java.io :: * <- -",
            "inherit 7 Iterable <- Graph",
            "inherit 7 Serializable <- Graph",
            "type 8 Seq <- Graph.successors",
            "inherit 11 Graph <- AdjacencyGraph",
            "type 11 Seq <- AdjacencyGraph",
            "type 12 mutable :: ArrayBuffer <- AdjacencyGraph",
            "type 14 Unit <- AdjacencyGraph.addEdge",
            "call 15 adjacency :: getOrElseUpdate <- AdjacencyGraph.addEdge",
            "call 15 mutable :: ArrayBuffer <- AdjacencyGraph.addEdge",
            "call 16 Logger :: debug <- AdjacencyGraph.addEdge",
            "call 16 describe <- AdjacencyGraph.addEdge",
            "call 19 adjacency.get().map() :: getOrElse <- AdjacencyGraph.successors",
            "call 19 adjacency :: get <- AdjacencyGraph.successors",
        ],
        absent: &["type 7 Graph <- Graph"],
    },
    Case {
        file: "refs.ipynb",
        expected: &[
            "import 1 numpy :: np <- -",
            "import 2 sklearn.model_selection :: train_test_split <- -",
            "inherit 4 BaseModel <- Model",
            "call 6 np :: mean <- Model.fit",
            "call 9 Model <- -",
            "call 10 m :: fit <- -",
            "call 10 train_test_split <- -",
        ],
        absent: &["call 8 matplotlib <- -"],
    },
];

/// `kind line qualifier :: name <- from`, an import's alias as `name as alias`.
fn render(r: &Reference) -> String {
    let q = r
        .qualifier
        .as_deref()
        .map(|q| format!("{q} :: "))
        .unwrap_or_default();
    let alias = r
        .alias
        .as_deref()
        .map(|a| format!(" as {a}"))
        .unwrap_or_default();
    format!(
        "{} {} {q}{}{alias} <- {}",
        r.kind.name(),
        r.line,
        r.name,
        r.from.as_deref().unwrap_or("-")
    )
}

fn refs_of(file: &str) -> (String, FileSyntax) {
    let text = fixture(&format!("refs/{file}"));
    let fs = parse(file, &text);
    (text, fs)
}

/// Every reference sits on a line of the file and inside the definition it
/// names as `from` (lines of notebooks are those of the code view).
fn check_reference_invariants(file: &str, text: &str, fs: &FileSyntax) {
    let lines = text.split('\n').count() as u32;
    for r in &fs.references {
        assert!(!r.name.is_empty(), "{file}: {r:?}");
        assert!(r.line >= 1, "{file}: {r:?}");
        if Language::from_path(file) != Language::Notebook {
            assert!(r.line <= lines, "{file}: {r:?}");
        }
        if let Some(from) = &r.from {
            let inside = fs
                .definitions
                .iter()
                .any(|d| &d.qualname == from && d.start_line <= r.line && r.line <= d.end_line);
            assert!(inside, "{file}: {} is not inside {from}", render(r));
        }
    }
}

#[test]
fn every_language_finds_its_references() {
    let mut failures = Vec::new();
    for case in CASES {
        let (text, fs) = refs_of(case.file);
        check_reference_invariants(case.file, &text, &fs);
        let got: Vec<String> = fs.references.iter().map(render).collect();
        let missing: Vec<&&str> = case
            .expected
            .iter()
            .filter(|e| !got.iter().any(|g| g == *e))
            .collect();
        let unwanted: Vec<&&str> = case
            .absent
            .iter()
            .filter(|e| got.iter().any(|g| g == *e))
            .collect();
        if !missing.is_empty() || !unwanted.is_empty() {
            failures.push(format!(
                "== {}\nmissing: {missing:#?}\nunwanted: {unwanted:#?}\ngot: {got:#?}",
                case.file
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_kind_appears_in_every_language_that_has_it() {
    for case in CASES {
        let (_, fs) = refs_of(case.file);
        let has = |k: RefKind| fs.references.iter().any(|r| r.kind == k);
        assert!(has(RefKind::Call), "{}", case.file);
        assert!(has(RefKind::Import), "{}", case.file);
        if !case.file.ends_with(".sh") && !case.file.ends_with(".c") {
            assert!(has(RefKind::Inherit), "{}", case.file);
        }
    }
}

#[test]
fn large_fixtures_keep_the_invariants() {
    for file in [
        "large.py",
        "large.rs",
        "large.js",
        "large.ts",
        "large.tsx",
        "large.go",
        "large.java",
        "large.c",
        "large.cpp",
        "large.cs",
        "large.rb",
        "large.php",
        "large.sh",
        "large.scala",
    ] {
        let text = fixture(file);
        let fs = parse(file, &text);
        assert!(fs.references.len() > 20, "{file}: {}", fs.references.len());
        check_reference_invariants(file, &text, &fs);
    }
}

#[test]
fn a_generated_file_stops_at_the_cap_with_a_diagnostic() {
    let text = "f(1)\n".repeat(25_000);
    let fs = parse_file("gen.py", &text, &ChunkOptions::default());
    assert_eq!(fs.references.len(), 20_000);
    assert!(
        fs.diagnostics.iter().any(|d| d.contains("references")),
        "{:?}",
        fs.diagnostics
    );
}

#[test]
fn deep_nesting_is_safe() {
    // 10,000 nested calls: no stack overflow, bounded work.
    let text = format!("x = {}1{}\n", "f(".repeat(10_000), ")".repeat(10_000));
    let fs = parse_file("deep.py", &text, &ChunkOptions::default());
    assert!(fs.references.len() <= 200, "{}", fs.references.len());
    // a 10,000-link chain: the call, and a read per link as deep as the
    // walk goes
    let text = format!("x = {}\n", "a.".repeat(10_000) + "b()");
    let fs = parse_file("chain.py", &text, &ChunkOptions::default());
    let calls = fs
        .references
        .iter()
        .filter(|r| r.kind == RefKind::Call)
        .count();
    assert!(
        calls <= 1 && fs.references.len() <= 200,
        "{}",
        fs.references.len()
    );
}
