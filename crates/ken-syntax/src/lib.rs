//! Syntax-aware chunking: text in; chunks, definitions, references and
//! diagnostics out.
//!
//! [`parse_file`] cuts one file into [`Chunk`](ken_core::Chunk)s (the unit
//! of retrieval), lists its [`Definition`](ken_core::Definition)s (the
//! input of the symbol table) and its [`Reference`](ken_core::Reference)s
//! (the input of the code graph). It never fails and never panics: whatever
//! goes wrong becomes a diagnostic and a line-window fallback.
//!
//! ```
//! use ken_syntax::{ChunkOptions, parse_file};
//!
//! let src = "class Greeter:\n    def hello(self):\n        return 'hi'\n";
//! let fs = parse_file("greet.py", src, &ChunkOptions::default());
//! assert_eq!(fs.chunks.len(), 1); // a small file is one chunk
//! assert_eq!(fs.definitions[1].qualname, "Greeter.hello");
//! ```
//!
//! # How files are cut
//!
//! - **Code** (14 tree-sitter languages, one generic walker driven by the
//!   tables in `spec/`): a file of at most `whole_file_chars` characters is
//!   one `File` chunk. A larger file gets one chunk per top-level definition
//!   and per member of a class-like definition (methods, nested classes);
//!   a class-like definition larger than `max_chunk_chars` is stored as a
//!   synthetic *skeleton* (member bodies replaced by `{ ... }` / `...`). A
//!   function is never cut unless it is larger than `max_definition_chars`
//!   (then: line windows that all carry its symbol). Everything outside the
//!   top-level definitions — imports, constants, statements, comments, and
//!   one-line types or macros — goes, in file order, into synthetic `Module`
//!   chunks. Definitions nested in functions stay in their function's chunk,
//!   and so do definitions that share a line with other code. C files that
//!   look like C++ (or that the C grammar reads badly) are read as C++.
//! - **Notebooks**: one `Cell` chunk per code cell, lines counted in the
//!   code view (see `notebook.rs`); `notebook_raw_lines` gives the raw JSON
//!   line of each code-view line (`notebook_lines.rs`), for what counts raw
//!   lines, such as blame.
//! - **Markdown**: one `Section` per heading. **JSON / YAML / TOML**: whole.
//! - **Anything else**, and code that cannot be parsed within
//!   `parse_timeout_ms` or is mostly syntax errors: line windows.
//!
//! # References
//!
//! One more iterative pass over the same tree (`refs/`, driven by the
//! `refs` half of each language's spec) lists calls (`f()`, `obj.m()`,
//! `Type::f()`, `new C()`, Rust macros and calls inside their arguments,
//! Ruby calls without parentheses, shell commands, decorators), imports
//! (`import`, `use`, `require`, `#include`, `using`, `source`), base classes
//! and implemented traits/interfaces (Go embedded fields, Ruby `include`),
//! and type names in signatures, fields and annotations. Each has its short
//! `name`, the `qualifier` it was reached through as written (`self.foo`,
//! `os.path`, `crate::walk`, `a.b()` — call arguments dropped), its line and
//! the qualified name of the innermost enclosing definition (`from`).
//! Imports: a named import is `name` from `qualifier` (the module, as
//! written: `.config`, `crate::sink`, `./router`); a whole-module import is
//! named by the name it binds (its alias, else the module's last segment:
//! `import os.path` → `path` from `os.path`, `const x = require('./x')` →
//! `x`, Go `flag "github.com/spf13/pflag"` → `flag`); a wildcard is `*`.
//! Aliases of named imports (`from a import b as c`) are not kept: the
//! reference type has no field for them.
//!
//! # Invariants
//!
//! - For every chunk with `synthetic == false`,
//!   `chunk.text == text[start_byte..end_byte]`; lines are 1-based, inclusive.
//! - A definition's lines run from its first line (Python decorators,
//!   `export` and `const x =` included; doc comments and `#[attributes]`
//!   above it not) to its last; its chunk starts earlier, at the first doc
//!   comment or attribute, so the chunk always contains the definition.
//! - Qualified names use `.` in every language (`Class.method`,
//!   `outer.inner`, `tests.fn_name`, `Command.AddCommand`, `res.send`).
//! - A reference's `from`, when set, is the qualified name of a definition
//!   whose lines contain the reference's line; at most 20,000 references
//!   are kept per file (a diagnostic says when more were cut).

//! # Code map
//!
//! - `lib.rs`: [`parse_file`], dispatch by language, the panic guard.
//! - `options.rs`: [`ChunkOptions`].
//! - `spec/`: one table per language (definition node kinds, names, bodies,
//!   comments, wrappers) and the few naming hooks tables cannot express.
//! - `parse.rs`: per-thread parsers, parse time limit.
//! - `walk.rs`: the generic, iterative walker that turns a tree into
//!   definitions (qualified names, ranges, signatures, docs, trivial bodies).
//! - `refs/`: the reference extractor (`mod.rs`: the iterative pass, callee
//!   and qualifier spelling, base-class lists, type names, macro token
//!   trees; `names.rs`: cleaning and splitting names as written);
//!   `spec/refs.rs`: the table types it reads.
//! - `doc.rs`, `trivial.rs`: doc comments and do-nothing bodies.
//! - `code.rs`: definitions → chunks (small file, per definition);
//!   `module.rs`: the module chunks; `skeleton.rs`: skeletons of large classes.
//! - `window.rs`: the line-window splitter. `notebook.rs`, `notebook_lines.rs`,
//!   `markdown.rs`.

mod code;
mod doc;
pub mod highlight;
mod lines;
mod markdown;
mod module;
mod names;
mod notebook;
mod notebook_lines;
mod options;
mod parse;
mod receivers;
mod refs;
mod skeleton;
mod spec;
mod trivial;
mod walk;
mod window;

use std::panic::{AssertUnwindSafe, catch_unwind};

use ken_core::{FileSyntax, Language};

pub use notebook::notebook_code;
pub use notebook_lines::notebook_raw_lines;
pub use options::ChunkOptions;
pub use spec::tree_sitter_language;

/// Chunks, definitions and diagnostics of one file. The language comes from
/// `path` ([`Language::from_path`]). Never fails, never panics.
pub fn parse_file(path: &str, text: &str, opts: &ChunkOptions) -> FileSyntax {
    let lang = Language::from_path(path);
    let opts = opts.sanitized();
    match catch_unwind(AssertUnwindSafe(|| chunk_file(lang, text, &opts))) {
        Ok(out) => out,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let mut out =
                catch_unwind(|| window::whole_or_windows(text, lang, 0, &opts)).unwrap_or_default();
            out.diagnostics.push(format!(
                "internal error while chunking ({msg}); fell back to line windows"
            ));
            out
        }
    }
}

fn chunk_file(lang: Language, text: &str, opts: &ChunkOptions) -> FileSyntax {
    match lang {
        Language::Notebook => notebook::chunk_notebook(text, opts),
        Language::Markdown => markdown::chunk_markdown(text, opts),
        Language::Json | Language::Yaml | Language::Toml => {
            window::whole_or_windows(text, lang, opts.max_chunk_chars, opts)
        }
        Language::Text => window::whole_or_windows(text, lang, opts.whole_file_chars, opts),
        _ => code::chunk_code(lang, text, opts),
    }
}
