//! Indexes that follow a branch: `NAME@BRANCH` beside `NAME`, sharing its
//! clone, left out of plain searches while `NAME` is there.

use std::collections::HashSet;

use crate::repo::OpenRepo;

/// The name of the repository a branch's index belongs to: `flask` for
/// `flask@2.3.x` following `2.3.x`.
pub(crate) fn branch_base<'a>(name: &'a str, branch: Option<&str>) -> &'a str {
    match branch {
        Some(b) => name
            .strip_suffix(b)
            .and_then(|n| n.strip_suffix('@'))
            .filter(|n| !n.is_empty())
            .unwrap_or(name),
        None => name,
    }
}

/// `names` (or storage keys) without the indexes of branches: `NAME@BRANCH`
/// while `NAME` is there too. A search reaches those by a `branch:` filter
/// or by name only, so that one repository's files are not listed once per
/// branch.
pub(crate) fn without_branches(names: impl IntoIterator<Item = String>) -> HashSet<String> {
    let all: HashSet<String> = names.into_iter().collect();
    all.iter()
        .filter(|n| !is_branch_entry(n, &all))
        .cloned()
        .collect()
}

/// An index that follows a branch under its repository's name plus
/// `@BRANCH` (see [`without_branches`]).
pub(crate) fn is_branch_index(r: &OpenRepo) -> bool {
    r.state.branch.as_deref().is_some_and(|b| {
        r.name
            .strip_suffix(b)
            .is_some_and(|n| n.len() > 1 && n.ends_with('@'))
    })
}

fn is_branch_entry(name: &str, all: &HashSet<String>) -> bool {
    name.match_indices('@')
        .any(|(at, _)| at > 0 && at + 1 < name.len() && all.contains(&name[..at]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_indexes_are_left_out_while_their_repository_is_there() {
        let names = ["flask", "flask@2.3.x", "me@home", "a/b", "a/b@release/1"].map(String::from);
        let left = without_branches(names);
        let mut left: Vec<&str> = left.iter().map(String::as_str).collect();
        left.sort();
        assert_eq!(left, ["a/b", "flask", "me@home"]);
    }

    #[test]
    fn a_branch_index_names_its_repository() {
        assert_eq!(branch_base("flask@2.3.x", Some("2.3.x")), "flask");
        assert_eq!(branch_base("a/b@release/1", Some("release/1")), "a/b");
        assert_eq!(branch_base("flask-lts", Some("2.3.x")), "flask-lts");
        assert_eq!(branch_base("@main", Some("main")), "@main");
        assert_eq!(branch_base("flask", None), "flask");
    }
}
