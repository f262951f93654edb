//! Languages Kenning knows, and how a path maps to one.

use serde::{Deserialize, Serialize};

/// The language of a file, decided from its path (and for a few files with no
/// extension, its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Bash,
    Scala,
    Notebook,
    Markdown,
    Json,
    Yaml,
    Toml,
    /// Any other text file: split into line windows.
    Text,
}

impl Language {
    pub const ALL: [Language; 20] = [
        Language::Python,
        Language::Rust,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Bash,
        Language::Scala,
        Language::Notebook,
        Language::Markdown,
        Language::Json,
        Language::Yaml,
        Language::Toml,
        Language::Text,
    ];

    /// The name used in output and in `--lang` filters.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Bash => "bash",
            Language::Scala => "scala",
            Language::Notebook => "notebook",
            Language::Markdown => "markdown",
            Language::Json => "json",
            Language::Yaml => "yaml",
            Language::Toml => "toml",
            Language::Text => "text",
        }
    }

    /// Parse a language name as a user would type it (`py`, `ts`, `c++`, ...).
    pub fn parse(name: &str) -> Option<Language> {
        let n = name.trim().to_ascii_lowercase();
        NAMES.iter().find(|(k, _)| *k == n).map(|(_, l)| *l)
    }

    /// Every name [`Language::parse`] takes, lowercase.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(k, _)| *k)
    }

    /// The language of a repository-relative path.
    pub fn from_path(path: &str) -> Language {
        let file = path.rsplit('/').next().unwrap_or(path);
        let lower = file.to_ascii_lowercase();
        match lower.as_str() {
            "makefile" | "dockerfile" | "license" | "copying" => return Language::Text,
            "cargo.lock" | "poetry.lock" => return Language::Toml,
            _ => {}
        }
        let ext = match lower.rsplit_once('.') {
            Some((_, e)) => e,
            None => return Language::Text,
        };
        match ext {
            "py" | "pyi" | "pyw" => Language::Python,
            "rs" => Language::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "ipp" | "tcc" | "inl" => Language::Cpp,
            "cs" => Language::CSharp,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "php" => Language::Php,
            "sh" | "bash" | "zsh" => Language::Bash,
            "scala" | "sc" => Language::Scala,
            "ipynb" => Language::Notebook,
            "md" | "markdown" | "mdx" => Language::Markdown,
            "json" | "jsonc" => Language::Json,
            "yaml" | "yml" => Language::Yaml,
            "toml" => Language::Toml,
            _ => Language::Text,
        }
    }

    /// Source code (as opposed to prose, configuration and plain text).
    pub fn is_code(self) -> bool {
        !matches!(
            self,
            Language::Markdown | Language::Json | Language::Yaml | Language::Toml | Language::Text
        )
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Names of languages as users type them.
const NAMES: &[(&str, Language)] = &[
    ("python", Language::Python),
    ("py", Language::Python),
    ("rust", Language::Rust),
    ("rs", Language::Rust),
    ("javascript", Language::JavaScript),
    ("js", Language::JavaScript),
    ("jsx", Language::JavaScript),
    ("typescript", Language::TypeScript),
    ("ts", Language::TypeScript),
    ("tsx", Language::Tsx),
    ("go", Language::Go),
    ("golang", Language::Go),
    ("java", Language::Java),
    ("c", Language::C),
    ("cpp", Language::Cpp),
    ("c++", Language::Cpp),
    ("cxx", Language::Cpp),
    ("csharp", Language::CSharp),
    ("c#", Language::CSharp),
    ("cs", Language::CSharp),
    ("ruby", Language::Ruby),
    ("rb", Language::Ruby),
    ("php", Language::Php),
    ("bash", Language::Bash),
    ("sh", Language::Bash),
    ("shell", Language::Bash),
    ("scala", Language::Scala),
    ("notebook", Language::Notebook),
    ("ipynb", Language::Notebook),
    ("jupyter", Language::Notebook),
    ("markdown", Language::Markdown),
    ("md", Language::Markdown),
    ("json", Language::Json),
    ("yaml", Language::Yaml),
    ("yml", Language::Yaml),
    ("toml", Language::Toml),
    ("text", Language::Text),
    ("txt", Language::Text),
];

/// Paths that hold tests by the usual conventions.
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|d| {
        matches!(
            d,
            "test" | "tests" | "testing" | "__tests__" | "spec" | "specs"
        )
    }) || file.starts_with("test_")
        || file.ends_with("_test.go")
        || file.ends_with("_test.py")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.ends_with("_spec.rb")
        || file.ends_with("test.java")
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_paths() {
        assert!(is_test_path("tests/test_basic.py"));
        assert!(is_test_path("src/foo_test.go"));
        assert!(is_test_path("lib/__tests__/x.js"));
        assert!(is_test_path("test/app.router.js"));
        assert!(!is_test_path("src/flask/app.py"));
        assert!(!is_test_path("crates/core/testutil.rs"));
    }

    #[test]
    fn every_language_is_parsed_by_its_own_name() {
        for l in Language::ALL {
            assert_eq!(Language::parse(l.name()), Some(l), "{}", l.name());
            assert!(Language::names().any(|n| n == l.name()));
        }
        assert_eq!(Language::parse(" PY "), Some(Language::Python));
        assert_eq!(Language::parse("cobol"), None);
    }

    use super::*;

    #[test]
    fn paths_map_to_languages() {
        assert_eq!(Language::from_path("src/flask/app.py"), Language::Python);
        assert_eq!(Language::from_path("a/b.TSX"), Language::Tsx);
        assert_eq!(Language::from_path("Makefile"), Language::Text);
        assert_eq!(Language::from_path("x/y.hpp"), Language::Cpp);
        assert_eq!(Language::from_path("n.ipynb"), Language::Notebook);
        assert_eq!(Language::from_path("README"), Language::Text);
    }

    #[test]
    fn names_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::parse(l.name()), Some(l));
        }
        assert_eq!(Language::parse("c++"), Some(Language::Cpp));
        assert_eq!(Language::parse("cobol"), None);
    }
}
