//! `ken search`: the JSON contract, exact-symbol pinning, filters, files mode.

mod common;

use common::*;

fn indexed() -> (Repo, Ken) {
    let r = Repo::new();
    python_project(&r);
    r.write(
        "web/session.js",
        "// Session handling for the web client.\n\nfunction refreshSession(token) {\n  return fetch('/refresh', { body: token });\n}\n\nmodule.exports = { refreshSession };\n",
    );
    r.write(
        "cmd/tokens.go",
        "package cmd\n\n// RefreshToken asks the server for a new session token.\nfunc RefreshToken(old string) string {\n\treturn old + \"!\"\n}\n",
    );
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    (r, ken)
}

#[test]
fn json_shape_is_the_contract() {
    let (_r, ken) = indexed();
    let v = ken.search(&["how is the session token refreshed"]);
    assert_eq!(v["query"], "how is the session token refreshed");
    assert!(v["took_ms"].is_u64());
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["rank"], i as u64 + 1);
        assert_eq!(r["repo"], "shop");
        for key in ["path", "language", "kind", "snippet"] {
            assert!(r[key].is_string(), "{key} in {r}");
        }
        for key in ["start_line", "end_line"] {
            assert!(r[key].as_u64().unwrap() >= 1, "{key} is 1-based: {r}");
        }
        assert!(r["start_line"].as_u64() <= r["end_line"].as_u64());
        assert!(r["score"].is_number());
        assert!(r["signals"].is_object());
        assert!(r["authors"].is_array());
        assert!(r.get("commit").is_some());
        assert!(r.get("symbol").is_some());
    }
    // the session code is what this question is about
    let top: Vec<String> = paths(&v).into_iter().take(3).collect();
    assert!(top.contains(&"src/shop/session.py".to_string()), "{top:?}");
}

#[test]
fn exact_symbols_are_pinned_wherever_they_appear_in_the_query() {
    let (_r, ken) = indexed();
    for q in [
        "RefreshToken",
        "what does RefreshToken do",
        "bug in RefreshToken when old is empty",
    ] {
        let v = ken.search(&[q]);
        let first = &v["results"][0];
        assert_eq!(first["path"], "cmd/tokens.go", "{q}: {v}");
        assert_eq!(first["pinned"], true, "{q}");
        assert!(first["signals"]["exact"].is_object(), "{q}: {first}");
    }
    // qualified names
    let v = ken.search(&["SessionStore.refresh_token"]);
    assert_eq!(v["results"][0]["symbol"], "SessionStore.refresh_token");
    assert_eq!(v["results"][0]["path"], "src/shop/session.py");
}

#[test]
fn filters() {
    let (_r, ken) = indexed();
    let v = ken.search(&["refresh session token", "--lang", "go"]);
    assert_eq!(paths(&v), ["cmd/tokens.go"]);
    let v = ken.search(&["refresh session token", "--lang", "js"]);
    assert_eq!(paths(&v), ["web/session.js"]);
    let v = ken.search(&["refresh session token", "--path", "src/**/*.py"]);
    assert!(
        paths(&v)
            .iter()
            .all(|p| p.starts_with("src/") && p.ends_with(".py")),
        "{v}"
    );
    assert!(!paths(&v).is_empty());
    let v = ken.search(&["refresh session token", "--path", "web"]);
    assert_eq!(paths(&v), ["web/session.js"]);
    let v = ken.search(&["token", "-n", "2"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    let v = ken.search(&["token", "--repo", "shop", "--files"]);
    let p = paths(&v);
    let mut dedup = p.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(p.len(), dedup.len(), "one result per file: {p:?}");
}

#[test]
fn human_output_lists_locations() {
    let (_r, ken) = indexed();
    let out = ken.run(&["search", "refresh_token"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("src/shop/session.py:"), "{text}");
    assert!(first.contains("SessionStore.refresh_token"), "{text}");
    assert!(!text.contains("\x1b["), "no colours off a terminal");
    let out = ken.run(&["--color", "always", "search", "refresh_token"]);
    assert!(stdout(&out).contains("\x1b["));
}

#[test]
fn several_repositories() {
    let (_r, ken) = indexed();
    let other = Repo::new();
    other.write(
        "lib/tokens.rs",
        "/// Refresh a token.\npub fn refresh_token(t: &str) -> String {\n    t.to_string()\n}\n",
    );
    other.commit("rust");
    let report = ken.index(&[other.path().to_str().unwrap(), "--name", "rusty"]);
    assert_eq!(report["fleet"]["whole"], true, "{report}");
    assert_eq!(report["fleet"]["files"], 1, "{report}");
    let v = ken.search(&["refresh_token", "-n", "20"]);
    let repos: std::collections::HashSet<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap())
        .collect();
    assert!(repos.contains("shop") && repos.contains("rusty"), "{v}");
    // each repository searched, with its results among those returned
    let counted: usize = v["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["hits"].as_u64().unwrap() as usize)
        .sum();
    assert_eq!(counted, v["results"].as_array().unwrap().len(), "{v}");
    let text = stdout(&ken.run(&["search", "refresh_token"]));
    assert!(text.contains("searched 2: "), "{text}");
    let v = ken.search(&["refresh_token", "--repo", "rusty"]);
    assert!(v.get("repos").is_none(), "one repository: no facets: {v}");
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["repo"] == "rusty")
    );
}

#[test]
fn a_reader_that_goes_away_stops_output_quietly() {
    // `ken search … | head -0`: the pipe is closed before ken writes.
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let mut child = ken
        .cmd()
        .args(["search", "token", "--repo", "shop"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn chunks_after_non_ascii_text_have_their_own_text() {
    // Chunk texts are cut from the file by byte offsets; text with
    // multi-byte characters before a function must not shift it.
    let r = Repo::new();
    let mut body = String::from(
        "\"\"\"Módulo de configuración — ñandú 日本語 ééééééééé.\"\"\"\n\nimport os\n\n",
    );
    for i in 0..400 {
        body.push_str(&format!("SETTING_{i} = \"valor {i} — ü\"\n"));
    }
    body.push_str("\n\ndef load_settings(path):\n    \"\"\"Read the settings file.\"\"\"\n    return open(path).read()\n");
    r.write("conf.py", body);
    r.commit("settings");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap()]);
    let v = ken.search(&["load_settings", "-n", "1"]);
    let hit = &v["results"][0];
    assert_eq!(hit["symbol"], "load_settings");
    assert!(
        hit["snippet"]
            .as_str()
            .unwrap()
            .starts_with("def load_settings(path):"),
        "{}",
        hit["snippet"]
    );
}

#[test]
fn exact_symbols_win_over_crowds_of_folded_ones_and_long_names_are_found() {
    // one trait `Handler`, sixty test functions `handler`, and a test
    // whose name is longer than 64 characters
    let r = Repo::new();
    // (in a path listed after the tests, so it is stored after them)
    r.write(
        "zz/handler.rs",
        "/// Handles a request.\npub trait Handler {\n    fn handle(&self);\n}\n",
    );
    for i in 0..60 {
        r.write(
            &format!("tests/case_{i}.rs"),
            format!("#[test]\nfn handler() {{\n    assert_eq!({i}, {i});\n}}\n"),
        );
    }
    let long = "a_reader_that_goes_away_stops_output_quietly_when_the_pipe_closes_early";
    assert!(long.len() > 64);
    r.write(
        "tests/pipes.rs",
        format!("#[test]\nfn {long}() {{\n    assert!(true);\n}}\n"),
    );
    r.commit("handlers");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap()]);
    let v = ken.search(&["Handler", "-n", "3"]);
    assert_eq!(v["results"][0]["path"], "zz/handler.rs", "{v}");
    assert_eq!(v["results"][0]["symbol"], "Handler");
    assert_eq!(v["results"][0]["pinned"], true);
    let v = ken.search(&[long, "-n", "3"]);
    assert_eq!(v["results"][0]["path"], "tests/pipes.rs", "{v}");
    assert_eq!(v["results"][0]["symbol"], long);
}
