use super::*;
use std::collections::BTreeSet;

const MAILMAP: &str = "\
Jane Doe <jane@example.com> <jane@old-laptop.local>
Jane Doe <jane@example.com> <JDOE@corp.example>
<bob@example.com> <bob@old.example>
Carl Proper <carl@example.com> carl <shared@example.com>
Dana Smith <dana@home.example>
Dana Smith <dana@work.example>
";

const IDENTITIES: &str = r#"
[[person]]
id = "ahmed"
name = "Ahmed Karim"
emails = ["ahmed@example.com", "1234+ahmedk@users.noreply.github.com"]
names = ["Ahmed K.", "ahmedk"]
handles = ["ahmedk"]
external = { jira = "557058:f00", linear = "u_42" }

[[person]]
id = "jane"
emails = ["JANE@example.com"]
handles = ["janed"]
"#;

fn ids() -> Identities {
    Identities::from_sources(Some(MAILMAP), &[IDENTITIES]).unwrap()
}

#[test]
fn email_match_is_case_insensitive() {
    let r = ids().resolve("whoever", "Ahmed@Example.COM");
    assert_eq!(r.id, "ahmed");
    assert_eq!(r.display_name, "Ahmed Karim");
    assert!(!r.is_bot);
}

#[test]
fn mailmap_then_identities_file() {
    let ids = ids();
    // The mailmap sends both old addresses to jane@example.com, which the
    // identities file gives to `jane`; the file has no name, the mailmap has.
    for email in [
        "jane@old-laptop.local",
        "jdoe@corp.example",
        "jane@example.com",
    ] {
        let r = ids.resolve("J", email);
        assert_eq!(r.id, "jane", "{email}");
    }
    let jane = ids.person("jane").unwrap();
    assert!(jane.emails.contains(&"jane@old-laptop.local".to_string()));
    assert!(jane.names.contains(&"Jane Doe".to_string()));
}

#[test]
fn mailmap_only_people_are_keyed_by_canonical_email() {
    let ids = ids();
    let a = ids.resolve("Bob", "bob@old.example");
    let b = ids.resolve("Bob", "BOB@example.com");
    assert_eq!(a, b);
    assert_eq!(a.id, "bob@example.com");
    // Form 4 needs the name too.
    assert_eq!(
        ids.resolve("carl", "shared@example.com").id,
        "carl@example.com"
    );
    assert_eq!(
        ids.resolve("Zed", "shared@example.com").id,
        "shared@example.com"
    );
    // Form 1 lines giving one proper name to two addresses: one person.
    assert_eq!(
        ids.resolve("dana", "dana@home.example").id,
        ids.resolve("ds", "dana@work.example").id
    );
    assert_eq!(
        ids.resolve("ds", "dana@work.example").display_name,
        "Dana Smith"
    );
}

#[test]
fn github_noreply_maps_to_the_handle() {
    let ids = ids();
    assert_eq!(
        ids.resolve("x", "999+AhmedK@users.noreply.github.com").id,
        "ahmed"
    );
    assert_eq!(
        ids.resolve("x", "janed@users.noreply.github.com").id,
        "jane"
    );
    // Unknown handle: a person of their own, keyed by the handle.
    let r = ids.resolve("Someone", "42+someone@users.noreply.github.com");
    assert_eq!(r.id, "someone");
    assert_eq!(
        ids.resolve("S", "someone@users.noreply.github.com").id,
        "someone"
    );
}

#[test]
fn names_match_known_people_unless_generic() {
    let ids = ids();
    assert_eq!(ids.resolve("Ahmed K.", "ak@elsewhere.example").id, "ahmed");
    assert_eq!(ids.resolve("ahmedk", "ak@elsewhere.example").id, "ahmed");
    assert_eq!(ids.resolve("root", "root@localhost").id, "root@localhost");
}

#[test]
fn unknown_authors_are_their_own_person() {
    let ids = ids();
    let r = ids.resolve("New Person", "New@Example.org");
    assert_eq!(r.id, "new@example.org");
    assert_eq!(r.display_name, "New Person");
}

#[test]
fn bots_are_flagged() {
    let ids = ids();
    for (name, email) in [
        (
            "dependabot[bot]",
            "49699333+dependabot[bot]@users.noreply.github.com",
        ),
        (
            "renovate[bot]",
            "29139614+renovate[bot]@users.noreply.github.com",
        ),
        (
            "github-actions[bot]",
            "41898282+github-actions[bot]@users.noreply.github.com",
        ),
        ("GitHub", "noreply@github.com"),
    ] {
        assert!(ids.resolve(name, email).is_bot, "{name}");
    }
    assert!(!ids.resolve("Jane", "jane@example.com").is_bot);
}

#[test]
fn bot_override_in_the_file() {
    let ids = Identities::from_sources(
        None,
        &["[[person]]\nid = \"release\"\nemails = [\"release@example.com\"]\nbot = true\n"],
    )
    .unwrap();
    assert!(ids.resolve("Release", "release@example.com").is_bot);
}

#[test]
fn find_by_any_alias() {
    let ids = ids();
    for q in [
        "ahmed",
        "AHMED KARIM",
        "Ahmed K.",
        "ahmed@example.com",
        "@ahmedk",
        "557058:f00",
        "jira:557058:f00",
        "u_42",
        "karim",
    ] {
        let found = ids.find(q);
        assert_eq!(found.first().map(|p| p.id.as_str()), Some("ahmed"), "{q}");
    }
    assert!(ids.find("nobody-at-all").is_empty());
    // Partial on a first name: Dana Smith.
    assert_eq!(ids.find("smith").len(), 1);
}

#[test]
fn observe_records_aliases_and_new_people() {
    let mut ids = ids();
    ids.observe("Ahmed Karim", "ahmed@example.com");
    ids.observe("A. Karim", "ahmed@example.com");
    ids.observe("Newcomer", "new@example.org");
    ids.observe("Newcomer N.", "new@example.org");
    let ahmed = ids.person("ahmed").unwrap();
    assert_eq!(ahmed.seen, 2);
    assert!(ahmed.names.contains(&"A. Karim".to_string()));
    let new = ids.person("new@example.org").unwrap();
    assert_eq!(new.origin, Origin::Commits);
    // the fuller of the two names, whichever came first
    assert_eq!(new.name, "Newcomer N.");
    assert_eq!(new.names, vec!["Newcomer".to_string()]);
    assert_eq!(
        ids.resolve("x", "new@example.org").display_name,
        "Newcomer N."
    );
    assert!(ids.people().iter().any(|p| p.id == "new@example.org"));
    assert_eq!(ids.find("newcomer").len(), 1);
}

#[test]
fn files_merge_by_id_and_conflicts_are_errors() {
    let a = "[[person]]\nid = \"ahmed\"\nemails = [\"a@x\"]\n";
    let b = "[[person]]\nid = \"ahmed\"\nname = \"Ahmed\"\nemails = [\"b@x\"]\n";
    let ids = Identities::from_sources(None, &[a, b]).unwrap();
    assert_eq!(ids.people().len(), 1);
    assert_eq!(ids.resolve("", "a@x").display_name, "Ahmed");
    assert_eq!(ids.resolve("", "b@x").id, "ahmed");

    let c = "[[person]]\nid = \"other\"\nemails = [\"A@x\"]\n";
    let err = Identities::from_sources(None, &[a, c]).unwrap_err();
    assert!(matches!(err, IdentityError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("`a@x`"), "{err}");
}

#[test]
fn bad_toml_says_where() {
    let err = Identities::from_labelled(None, &[(".ken/identities.toml", "[[person]\nid = 1\n")])
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with(".ken/identities.toml:1:"), "{msg}");
}

#[test]
fn commit_authors_with_the_same_name_are_one_person() {
    let mut ids = Identities::default();
    ids.observe("Maria  Lopez", "maria@home.example");
    let b = ids.observe("maria lopez", "m.lopez@corp.example");
    let a = ids.resolve("Maria  Lopez", "maria@home.example");
    assert_eq!(a.id, b.id, "case and spacing aside, the same name");
    // pure look-ups agree once the authors are observed
    assert_eq!(ids.resolve("Maria Lopez", "m.lopez@corp.example").id, a.id);
    // the person is found by the id either address would have alone
    assert_eq!(ids.person("maria@home.example").unwrap().id, a.id);
    let maria = ids.person(&a.id).unwrap();
    assert_eq!(maria.emails.len(), 2, "{maria:?}");
    // generic names and bots are never merged by name
    let r1 = ids.observe("root", "root@a.example");
    let r2 = ids.observe("root", "root@b.example");
    assert_ne!(r1.id, r2.id);
}

#[test]
fn noreply_addresses_merge_with_their_handle() {
    // the handle first seen as a name
    let mut ids = Identities::default();
    ids.observe("mlopez", "maria@home.example");
    let b = ids.observe("Maria Lopez", "4711+mlopez@users.noreply.github.com");
    let a = ids.resolve("mlopez", "maria@home.example");
    assert_eq!((a.id.as_str(), b.id.as_str()), ("mlopez", "mlopez"));
    // the noreply address first, then the handle as a name, and the old
    // noreply form without the numeric id
    let mut ids = Identities::default();
    let a = ids.observe("Maria Lopez", "4711+mlopez@users.noreply.github.com");
    let b = ids.observe("mlopez", "maria@home.example");
    let c = ids.observe("M", "mlopez@users.noreply.github.com");
    assert_eq!(
        (a.id.as_str(), b.id.as_str(), c.id.as_str()),
        ("mlopez", "mlopez", "mlopez")
    );
}

#[test]
fn same_name_merging_can_be_turned_off() {
    let mut ids = Identities::from_sources(None, &["merge_same_names = false\n"]).unwrap();
    let a = ids.observe("Sam Lee", "sam@one.example");
    let b = ids.observe("Sam Lee", "sam@two.example");
    assert_ne!(a.id, b.id);
    // the default merges them
    let mut ids = Identities::from_sources(None, &[""]).unwrap();
    let a = ids.observe("Sam Lee", "sam@one.example");
    let b = ids.observe("Sam Lee", "sam@two.example");
    assert_eq!(a.id, b.id);
}

/// Every order of `identities` observed (the order, as indices), each
/// giving the person set of commit authors (each person's id, display name
/// and sorted aliases) and the id every identity resolves to.
#[allow(clippy::type_complexity)]
fn every_order(
    base: &Identities,
    identities: &[(&str, &str)],
) -> Vec<(
    Vec<usize>,
    BTreeSet<(String, String, Vec<String>, Vec<String>, Vec<String>)>,
    Vec<String>,
)> {
    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                out.push(q);
            }
        }
        out
    }
    let sorted = |v: &[String]| {
        let mut v: Vec<String> = v.iter().map(|s| s.to_lowercase()).collect();
        v.sort();
        v.dedup();
        v
    };
    permutations(identities.len())
        .into_iter()
        .map(|order| {
            let mut ids = base.clone();
            for &i in &order {
                ids.observe(identities[i].0, identities[i].1);
            }
            let people = ids
                .people()
                .iter()
                .filter(|p| p.origin == Origin::Commits)
                .map(|p| {
                    (
                        p.id.clone(),
                        p.name.clone(),
                        sorted(&p.emails),
                        sorted(&p.names),
                        sorted(&p.handles),
                    )
                })
                .collect();
            let resolved = identities
                .iter()
                .map(|(n, e)| ids.resolve(n, e).id)
                .collect();
            (order, people, resolved)
        })
        .collect()
}

#[test]
fn merging_does_not_depend_on_the_order_identities_are_observed() {
    // A handle-only identity (the noreply address, named by its handle),
    // the person's name with another address, and the name with the
    // handle's other noreply form: one person, whatever comes first.
    let three_way = [
        ("jrivera", "123+jrivera@users.noreply.github.com"),
        ("Jo Rivera", "jo@home.example"),
        ("Jo Rivera", "jrivera@users.noreply.github.com"),
    ];
    // The handle as the name of one commit, the noreply address with the
    // full name, and the full name with a work address.
    let by_name = [
        ("mlopez", "maria@home.example"),
        ("Maria Lopez", "4711+mlopez@users.noreply.github.com"),
        ("maria  lopez", "m.lopez@corp.example"),
        ("Someone Else", "else@corp.example"),
    ];
    for (identities, people) in [(&three_way[..], 1), (&by_name[..], 2)] {
        for base in [Identities::default(), ids()] {
            let all = every_order(&base, identities);
            let (first_order, first_people, first_resolved) = &all[0];
            assert_eq!(
                first_people.len(),
                people,
                "{first_order:?}: {first_people:?}"
            );
            for (order, people, resolved) in &all[1..] {
                assert_eq!(
                    (people, resolved),
                    (first_people, first_resolved),
                    "{order:?} against {first_order:?}"
                );
            }
        }
    }
    // Kept apart when names may not merge: only the two noreply forms of
    // one handle are one person.
    let apart = Identities::from_sources(None, &["merge_same_names = false\n"]).unwrap();
    let all = every_order(&apart, &three_way);
    assert!(all.iter().all(|(_, people, _)| people == &all[0].1));
    assert_eq!(all[0].1.len(), 2, "{:?}", all[0].1);
}
