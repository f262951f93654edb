//! Which files are worth indexing, and why the others are skipped.
//!
//! Nothing is skipped silently: every decision returns a [`SkipReason`] that
//! the indexer counts and reports.

/// Why a file was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Contains NUL bytes, or has a binary extension (images, archives...).
    Binary,
    /// Third-party code checked into the repository (`vendor/`, `node_modules/`...).
    Vendored,
    /// Machine-written (`*.min.js`, lock files, `@generated`, `DO NOT EDIT`).
    Generated,
    /// Larger than the size limit.
    TooLarge,
    /// Matched by `.kenignore` (or `.gitignore` in a working tree).
    Ignored,
    /// A symbolic link (never followed: it may leave the repository).
    Symlink,
    /// A git submodule (its commit is recorded, its files are not ours).
    Submodule,
    /// The path is not valid UTF-8.
    BadPath,
    /// The file could not be read.
    Unreadable,
    /// The blob is not in the object database (a partial clone, a shallow
    /// or damaged mirror): listed in the commit's tree, absent on disk.
    MissingObject,
}

impl SkipReason {
    pub const ALL: [SkipReason; 10] = [
        SkipReason::Binary,
        SkipReason::Vendored,
        SkipReason::Generated,
        SkipReason::TooLarge,
        SkipReason::Ignored,
        SkipReason::Symlink,
        SkipReason::Submodule,
        SkipReason::BadPath,
        SkipReason::Unreadable,
        SkipReason::MissingObject,
    ];
}

impl SkipReason {
    /// A stable lower-case name for reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::Vendored => "vendored",
            SkipReason::Generated => "generated",
            SkipReason::TooLarge => "too-large",
            SkipReason::Ignored => "ignored",
            SkipReason::Symlink => "symlink",
            SkipReason::Submodule => "submodule",
            SkipReason::BadPath => "bad-path",
            SkipReason::Unreadable => "unreadable",
            SkipReason::MissingObject => "missing-object",
        }
    }
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Default size limit: 1 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 20;

/// How large a notebook file may be before it is left out unread: its
/// outputs (plots as base64, tables) are never indexed, and the size limit
/// applies to its code cells instead.
pub const MAX_NOTEBOOK_BYTES: u64 = 64 << 20;

/// A Jupyter notebook, by its extension.
pub fn is_notebook(path: &str) -> bool {
    path.rsplit('.')
        .next()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
        && path.contains('.')
}

const VENDOR_DIRS: &[&str] = &[
    "vendor",
    "vendors",
    "node_modules",
    "bower_components",
    "third_party",
    "third-party",
    "thirdparty",
    "external",
    "site-packages",
    ".venv",
    "venv",
    "Pods",
    "Carthage",
    "jspm_packages",
];

const GENERATED_NAMES: &[&str] = &[
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "Pipfile.lock",
    "composer.lock",
    "Gemfile.lock",
    "go.sum",
    "npm-shrinkwrap.json",
    "uv.lock",
];

const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.css",
    ".js.map",
    ".css.map",
    ".map",
    ".pb.go",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.h",
    ".pb.cc",
    ".g.dart",
    ".designer.cs",
    "_generated.go",
    ".generated.ts",
];

const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "ico",
    "icns",
    "webp",
    "tif",
    "tiff",
    "psd",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "7z",
    "rar",
    "tar",
    "jar",
    "war",
    "whl",
    "egg",
    "so",
    "dylib",
    "dll",
    "exe",
    "o",
    "a",
    "lib",
    "obj",
    "class",
    "pyc",
    "pyo",
    "wasm",
    "bin",
    "dat",
    "db",
    "sqlite",
    "sqlite3",
    "mp3",
    "mp4",
    "wav",
    "ogg",
    "flac",
    "avi",
    "mov",
    "mkv",
    "webm",
    "ttf",
    "otf",
    "woff",
    "woff2",
    "eot",
    "npy",
    "npz",
    "pkl",
    "pickle",
    "h5",
    "onnx",
    "safetensors",
    "pt",
    "ckpt",
    "parquet",
    "xlsx",
    "xls",
    "docx",
    "doc",
    "pptx",
    "ppt",
];

/// Decide from the path alone. `None` means "look at the content".
pub fn skip_by_path(path: &str) -> Option<SkipReason> {
    let mut parts = path.split('/').peekable();
    let mut name = path;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            name = part;
        } else if VENDOR_DIRS.contains(&part) {
            return Some(SkipReason::Vendored);
        }
    }
    if GENERATED_NAMES.contains(&name) {
        return Some(SkipReason::Generated);
    }
    let lower = name.to_ascii_lowercase();
    if GENERATED_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return Some(SkipReason::Generated);
    }
    if let Some((_, ext)) = lower.rsplit_once('.')
        && BINARY_EXTENSIONS.contains(&ext)
    {
        return Some(SkipReason::Binary);
    }
    if is_released_copy(&lower) {
        return Some(SkipReason::Vendored);
    }
    None
}

/// A script or style sheet named for a release of its own project
/// (`jquery-3.5.1.js`, `underscore-1.13.1.js`, `bootstrap-4.3.1.css`):
/// a library copied in whole, which a project ships but does not write.
/// Such copies sit beside the project's own files (`static/`), not under a
/// vendor folder, and being large and wordy, they match many questions.
fn is_released_copy(lower_name: &str) -> bool {
    let Some(stem) = lower_name
        .strip_suffix(".js")
        .or_else(|| lower_name.strip_suffix(".css"))
    else {
        return false;
    };
    let stem = stem.strip_suffix(".slim").unwrap_or(stem);
    let Some((name, version)) = stem.rsplit_once('-') else {
        return false;
    };
    let version = version.strip_prefix('v').unwrap_or(version);
    let parts: Vec<&str> = version.split('.').collect();
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Decide from the content (after the path said "maybe").
pub fn skip_by_content(bytes: &[u8]) -> Option<SkipReason> {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Some(SkipReason::Binary);
    }
    // Generated-code markers are conventionally in the first few lines.
    let first_lines: &[u8] = {
        let mut end = head.len();
        let mut newlines = 0;
        for (i, &b) in head.iter().enumerate() {
            if b == b'\n' {
                newlines += 1;
                if newlines == 5 {
                    end = i;
                    break;
                }
            }
        }
        &head[..end]
    };
    let text = String::from_utf8_lossy(first_lines);
    if text.contains("@generated")
        || text.contains("DO NOT EDIT")
        || text.contains("Code generated by")
        || text.contains("<auto-generated")
    {
        return Some(SkipReason::Generated);
    }
    if looks_minified(head) {
        return Some(SkipReason::Generated);
    }
    None
}

/// Very long lines with little whitespace: minified bundles.
fn looks_minified(head: &[u8]) -> bool {
    if head.len() < 4096 {
        return false;
    }
    let longest_line = head
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    let spaces = head.iter().filter(|&&b| b == b' ').count();
    longest_line >= 4000 && spaces * 20 < head.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_rules() {
        assert_eq!(skip_by_path("vendor/x/y.go"), Some(SkipReason::Vendored));
        assert_eq!(
            skip_by_path("web/node_modules/a/index.js"),
            Some(SkipReason::Vendored)
        );
        assert_eq!(skip_by_path("dist/app.min.js"), Some(SkipReason::Generated));
        assert_eq!(skip_by_path("Cargo.lock"), Some(SkipReason::Generated));
        assert_eq!(skip_by_path("docs/logo.PNG"), Some(SkipReason::Binary));
        assert_eq!(skip_by_path("src/vendor.rs"), None);
        assert_eq!(skip_by_path("src/main.rs"), None);
    }

    #[test]
    fn libraries_named_for_their_release_are_vendored() {
        for path in [
            "sphinx/themes/basic/static/jquery-3.5.1.js",
            "static/underscore-1.3.1.js",
            "web/jquery-ui-1.12.1.js",
            "css/bootstrap-v4.3.1.css",
            "js/jquery-3.6.0.slim.js",
        ] {
            assert_eq!(skip_by_path(path), Some(SkipReason::Vendored), "{path}");
        }
        // the project's own scripts, and versions that are not releases
        for path in [
            "static/searchtools.js",
            "static/doctools.js",
            "src/migrate-v2.js",
            "lib/http-2.rs",
            "docs/release-1.2.3.md",
            "src/es-2015.ts",
        ] {
            assert_eq!(skip_by_path(path), None, "{path}");
        }
    }

    #[test]
    fn content_rules() {
        assert_eq!(skip_by_content(b"abc\0def"), Some(SkipReason::Binary));
        assert_eq!(
            skip_by_content(b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n"),
            Some(SkipReason::Generated)
        );
        let minified = format!("var a={};", "x".repeat(9000));
        assert_eq!(
            skip_by_content(minified.as_bytes()),
            Some(SkipReason::Generated)
        );
        assert_eq!(skip_by_content(b"fn main() {}\n"), None);
        // the marker only counts near the top of the file
        let late = format!("{}// DO NOT EDIT\n", "x = 1\n".repeat(20));
        assert_eq!(skip_by_content(late.as_bytes()), None);
    }
}
