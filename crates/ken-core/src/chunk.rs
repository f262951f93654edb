//! Chunks (the unit of retrieval) and definitions (the unit of the symbol table).

use serde::{Deserialize, Serialize};

use crate::Language;

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// A whole file (small files, configuration files).
    File,
    /// Imports, constants and top-level statements of a large file.
    Module,
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Impl,
    /// A namespace / module block / object (`mod x {}`, `namespace`, Scala `object`).
    Namespace,
    Macro,
    /// Type alias, typedef, record and similar type definitions.
    Type,
    /// A Markdown section (heading and its body).
    Section,
    /// A notebook code cell.
    Cell,
    /// A window of lines (fallback for unknown languages or parse failures).
    Window,
}

impl ChunkKind {
    pub fn name(self) -> &'static str {
        match self {
            ChunkKind::File => "file",
            ChunkKind::Module => "module",
            ChunkKind::Function => "function",
            ChunkKind::Method => "method",
            ChunkKind::Class => "class",
            ChunkKind::Struct => "struct",
            ChunkKind::Enum => "enum",
            ChunkKind::Trait => "trait",
            ChunkKind::Interface => "interface",
            ChunkKind::Impl => "impl",
            ChunkKind::Namespace => "namespace",
            ChunkKind::Macro => "macro",
            ChunkKind::Type => "type",
            ChunkKind::Section => "section",
            ChunkKind::Cell => "cell",
            ChunkKind::Window => "window",
        }
    }

    pub fn parse(s: &str) -> Option<ChunkKind> {
        Some(match s {
            "file" => ChunkKind::File,
            "module" => ChunkKind::Module,
            "function" => ChunkKind::Function,
            "method" => ChunkKind::Method,
            "class" => ChunkKind::Class,
            "struct" => ChunkKind::Struct,
            "enum" => ChunkKind::Enum,
            "trait" => ChunkKind::Trait,
            "interface" => ChunkKind::Interface,
            "impl" => ChunkKind::Impl,
            "namespace" => ChunkKind::Namespace,
            "macro" => ChunkKind::Macro,
            "type" => ChunkKind::Type,
            "section" => ChunkKind::Section,
            "cell" => ChunkKind::Cell,
            "window" => ChunkKind::Window,
            _ => return None,
        })
    }

    /// Kinds that contain other definitions (a class and its methods).
    pub fn is_container(self) -> bool {
        matches!(
            self,
            ChunkKind::Class
                | ChunkKind::Struct
                | ChunkKind::Enum
                | ChunkKind::Trait
                | ChunkKind::Interface
                | ChunkKind::Impl
                | ChunkKind::Namespace
        )
    }
}

impl std::fmt::Display for ChunkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One piece of a file, as the syntax layer cut it.
///
/// Line numbers are 1-based and inclusive; bytes are a half-open range into
/// the file's text. `text` is what gets indexed: for most chunks it is exactly
/// `file[start_byte..end_byte]`; for synthetic chunks (module chunk, class
/// skeleton, notebook cell) it is assembled and `synthetic` is true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub kind: ChunkKind,
    pub language: Language,
    /// Short name of the defined symbol (`method`), if any.
    pub symbol: Option<String>,
    /// Qualified name (`Class.method`, `module.fn`), if any.
    pub qualname: Option<String>,
    /// First line(s) of the definition, up to the body.
    pub signature: Option<String>,
    /// The doc comment or docstring, cleaned of comment markers.
    pub doc: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub text: String,
    pub synthetic: bool,
    /// The body does nothing (`pass`, `...`, only a docstring, `{}`): down-weighted in ranking.
    pub trivial: bool,
    /// Notebook cell number (0-based index among all cells), for citations.
    pub cell: Option<u32>,
}

/// A named definition found in a file: the input of the symbol table.
///
/// Definitions are reported for every function, class, method... even when
/// the file is small enough to be a single chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub qualname: String,
    pub kind: ChunkKind,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
}

/// How one piece of code refers to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RefKind {
    /// A call (`f()`, `obj.m()`, `new C()`, a macro invocation).
    Call,
    /// An import / use / include of a name or module.
    Import,
    /// Inheritance or implementation (`class A(B)`, `impl T for S`, `extends`).
    Inherit,
    /// A type named in a signature, field, annotation or cast.
    Type,
    /// A member read without being called (`self.jinja_env`, a method
    /// passed as a value: `_async_wrapper=self.ensure_sync`).
    Read,
}

impl RefKind {
    pub fn name(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Import => "import",
            RefKind::Inherit => "inherit",
            RefKind::Type => "type",
            RefKind::Read => "read",
        }
    }

    /// The kind of a [`RefKind::name`].
    pub fn parse(name: &str) -> Option<RefKind> {
        [
            RefKind::Call,
            RefKind::Import,
            RefKind::Inherit,
            RefKind::Type,
            RefKind::Read,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// A reference found in a file, before resolution to a definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub kind: RefKind,
    /// The referenced short name (`parse_config`, `Flask`).
    pub name: String,
    /// What the name was reached through, as written: `self`, `os.path`,
    /// `config`, `crate::walk`; for imports, the module path.
    pub qualifier: Option<String>,
    /// 1-based line of the reference.
    pub line: u32,
    /// Qualified name of the enclosing definition (None at module level).
    pub from: Option<String>,
    /// For an import: the name it binds in the file when that is not
    /// `name` (`from m import a as b`, `import { a as b } from 'm'`: `b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// For a call through a variable (`db.query()`): the class the
    /// variable was made from where it was assigned in the same scope
    /// (`db = Database(...)`, `const db = new Database()`,
    /// `self.db = Database(...)` in a method of the class), as written
    /// there (`Database`, `models.Database`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
}

/// A module-level variable whose class the file says, by an annotation
/// or by the constructor it was made with (`current_app: FlaskProxy =
/// LocalProxy(...)`, `app = Flask(__name__)`, `export const app: Hono =
/// new Hono()`): a file that imports it can look up its members there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypedValue {
    pub name: String,
    /// The class as written in this file (`FlaskProxy`, `models.Database`).
    pub class: String,
}

/// What the syntax layer returns for one file: never an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSyntax {
    pub chunks: Vec<Chunk>,
    pub definitions: Vec<Definition>,
    /// Calls, imports, inheritance and type uses (empty until a language extracts them).
    #[serde(default)]
    pub references: Vec<Reference>,
    /// Module-level variables of a known class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<TypedValue>,
    /// Things a user may want to know (a parse error fell back to line windows...).
    pub diagnostics: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_kinds_read_back_their_names() {
        for k in [
            RefKind::Call,
            RefKind::Import,
            RefKind::Inherit,
            RefKind::Type,
            RefKind::Read,
        ] {
            assert_eq!(RefKind::parse(k.name()), Some(k));
        }
        assert_eq!(RefKind::parse("nonsense"), None);
    }
}
