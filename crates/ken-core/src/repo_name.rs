//! Repository names: what `ken index --name`, a token's `--repo` and the
//! API's `{name}` say. A name is compared as written, never through the
//! form a store keeps it under (`pallets/flask` is stored as
//! `pallets__flask`, which is not another name for it).

/// The longest name accepted.
pub const MAX_LEN: usize = 200;

/// Why `name` cannot name a repository, or `Ok` when it can: one or more
/// `/`-separated parts, none empty, none starting with a dot (so no `.` or
/// `..`), no control character (NUL included), no backslash, no
/// surrounding spaces, at most [`MAX_LEN`] bytes.
pub fn check(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a repository name cannot be empty".into());
    }
    if name.len() > MAX_LEN {
        return Err(format!(
            "a repository name has at most {MAX_LEN} bytes, not {}",
            name.len()
        ));
    }
    if name.trim() != name {
        return Err(format!(
            "`{}` starts or ends with a space",
            name.escape_debug()
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control() || *c == '\\') {
        return Err(format!(
            "`{}` holds {}",
            name.escape_debug(),
            if c == '\\' {
                "a backslash".to_string()
            } else {
                format!("the control character {}", c.escape_unicode())
            }
        ));
    }
    for part in name.split('/') {
        if part.is_empty() {
            return Err(format!("`{name}` has an empty part between slashes"));
        }
        if part.starts_with('.') {
            return Err(format!(
                "`{name}`: a part cannot start with a dot (`{part}`)"
            ));
        }
    }
    Ok(())
}

/// A name made from a folder or URL (`.dotfiles` → `dotfiles`): what
/// [`check`] refuses is dropped, and `repo` when nothing is left.
pub fn from_path_part(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .filter(|c| !c.is_control() && *c != '\\' && *c != '/')
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    let mut out: String = cleaned.chars().take(MAX_LEN / 4).collect();
    if out.is_empty() {
        out = "repo".into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_people_write_pass() {
        for ok in [
            "flask",
            "pallets/flask",
            "a__b",
            "x-y",
            "my repo",
            "C++",
            "ünïcode",
            "v1.2",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn names_that_could_alias_or_escape_are_refused() {
        for bad in [
            "",
            "x\0y",
            "a\nb",
            "tab\there",
            "..",
            ".",
            "../etc",
            "a/../b",
            ".hidden",
            "a/.git",
            "a//b",
            "/abs",
            "trailing/",
            " padded",
            "padded ",
            "back\\slash",
        ] {
            assert!(check(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(check(&"x".repeat(MAX_LEN + 1)).is_err());
    }

    #[test]
    fn names_made_from_paths_always_pass() {
        for raw in [".dotfiles", "..", "", "a\0b", " x ", "flask"] {
            let n = from_path_part(raw);
            assert_eq!(check(&n), Ok(()), "{raw:?} -> {n:?}");
        }
        assert_eq!(from_path_part(".dotfiles"), "dotfiles");
        assert_eq!(from_path_part(".."), "repo");
    }
}
