//! A killed indexer leaves a searchable index; the next run completes it.
//! Two indexers on one repository never corrupt it.

mod common;

use std::time::{Duration, Instant};

use common::*;

#[test]
fn sigkill_mid_index_then_search_and_resume() {
    let r = big_repo(1500, 40);
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    // reference: a clean index in another home
    let reference = Ken::new();
    let full = reference.index(&[&p, "--rev", "HEAD", "--name", "big"]);
    let full_ms = full["elapsed_ms"].as_u64().unwrap();

    // kill at several points of the run
    let mut killed_mid_run = 0;
    for fraction in [0.2, 0.5, 0.8] {
        let mut child = ken
            .cmd()
            .args([
                "index",
                "--quiet",
                &p,
                "--rev",
                "HEAD",
                "--name",
                "big",
                "--threads",
                "1",
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(
            ((full_ms as f64) * fraction) as u64 + 30,
        ));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if !finished {
            killed_mid_run += 1;
        }
        // whatever was committed is searchable, and search never fails
        let out = ken.run(&["search", "--json", "handler_3_7"]);
        assert!(out.status.success(), "search after kill: {}", stderr(&out));
    }
    assert!(
        killed_mid_run > 0,
        "the indexer was never interrupted; make the fixture bigger"
    );

    // the next run completes the work
    let rep = ken.index(&[&p, "--rev", "HEAD", "--name", "big"]);
    assert_eq!(rep["files"], full["files"]);
    let done = ken.json(&["status", "--json"]);
    let reference_status = reference.json(&["status", "--json"]);
    assert_eq!(
        done["repos"][0]["stats"],
        reference_status["repos"][0]["stats"]
    );
    assert!(done["repos"][0]["pending"].is_null());
    // history and blame were finished too
    let people = &done["repos"][0]["people"];
    assert_eq!(people, &reference_status["repos"][0]["people"]);
    assert!(people["commits"].as_u64().unwrap() > 0);
    assert_eq!(people["files_blamed"], people["files"], "{people}");
    let a = ken.search(&["handler_1234_5"]);
    let b = reference.search(&["handler_1234_5"]);
    assert_eq!(paths(&a), paths(&b));
    // and it is now up to date
    let rep = ken.index(&[&p, "--rev", "HEAD", "--name", "big"]);
    assert_eq!(rep["up_to_date"], true);
}

#[test]
fn second_indexer_is_refused_while_the_first_runs() {
    let r = big_repo(600, 40);
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    let mut first = ken
        .cmd()
        .args(["index", "--quiet", &p, "--name", "big", "--threads", "1"])
        .spawn()
        .unwrap();
    // wait until the first holds the lock
    let lock = ken.index_dir("big").join("lock");
    let t0 = Instant::now();
    while !lock.exists() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(50));
    let second = ken.run(&["index", &p, "--name", "big"]);
    let first_status = first.wait().unwrap();
    assert!(first_status.success());
    if second.status.success() {
        // the first finished before the second started: then the second found it up to date
        assert!(stdout(&second).contains("processed") || stdout(&second).contains("up to date"));
    } else {
        assert_eq!(second.status.code(), Some(3), "{}", stderr(&second));
        assert!(
            stderr(&second).contains("another `ken index` is updating"),
            "{}",
            stderr(&second)
        );
    }
    // the index is whole either way
    let v = ken.search(&["handler_599_39"]);
    assert_eq!(paths(&v)[0], "pkg/mod_49/file_599.py");
}

#[test]
fn held_lock_refuses_deterministically() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let lock = std::fs::File::options()
        .write(true)
        .open(ken.index_dir("shop").join("lock"))
        .unwrap();
    lock.lock().unwrap();
    let out = ken.run(&["index", r.path().to_str().unwrap(), "--name", "shop"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("another `ken index` is updating"),
        "{}",
        stderr(&out)
    );
    // searching is not blocked by a writer
    let out = ken.run(&["search", "refresh_token"]);
    assert!(out.status.success());
    drop(lock);
    let out = ken.run(&["index", r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(out.status.success());
}
