//! Timing of the people layer on real repositories.
//!
//! ```text
//! cargo build --release -p ken-source --examples
//! people_bench blame REPO [--threads N] [--budget SECS] [--max-lines N] [--limit N] [--only SUBSTR] [--single]
//! people_bench log REPO [--stats] [--first-parent] [--no-files]
//! people_bench meta REPO
//! people_bench compare REPO [--only SUBSTR] [--limit N]
//! people_bench show REPO PATH
//! people_bench incremental REPO [--back N] [--threads N]
//! people_bench vs-git REPO [--only SUBSTR] [--limit N]
//! ```
//!
//! `blame` blames every source file of HEAD (by extension: the languages
//! the chunker knows) and prints totals, per-file percentiles, the slowest
//! files and the files that fell back. `--single` blames file by file with
//! `blame_file` (no budget, one thread) instead of the batch.
//! `log` walks the whole history from HEAD with changed files.
//! `compare` checks the batch blame against gix's per-file `blame::file`
//! and prints the files where they differ, and the time of each.
//! `incremental` blames every source file at HEAD~N (default 100), then
//! the files that changed since at HEAD twice: from scratch, and with the
//! blame at HEAD~N known; it prints both times and the lines that differ.
//! `vs-git` blames each file alone (one thread, no budget) with
//! `blame_file` and with `git blame --porcelain`, alternating which runs
//! first, and prints both times per file, their sums, and how many lines
//! the two give to different commits (git's diff heuristics differ a
//! little from imara-diff's).

use std::time::{Duration, Instant};

use ken_source::{BlameMethod, BlameOptions, GitRepo, ListOptions, LogOptions};

const SOURCE_EXT: &[&str] = &[
    "py", "rs", "go", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "c", "h", "cc", "cpp", "hpp",
    "cs", "rb", "php", "sh", "scala", "kt",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, repo_path) = match (args.first(), args.get(1)) {
        (Some(m), Some(r)) => (m.as_str(), r.as_str()),
        _ => {
            eprintln!("usage: people_bench blame|log|meta REPO [flags]");
            std::process::exit(2);
        }
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let repo = GitRepo::open(std::path::Path::new(repo_path)).expect("open repository");
    match mode {
        "blame" => blame(&repo, &value, flag("--single")),
        "log" => log(
            &repo,
            flag("--stats"),
            flag("--first-parent"),
            !flag("--no-files"),
        ),
        "meta" => meta(&repo),
        "show" => {
            let path = args.get(2).expect("show REPO PATH");
            for r in repo.blame_file("HEAD", path).expect("blame") {
                println!("{} {}-{}", r.commit, r.start_line, r.end_line);
            }
        }
        "compare" => compare(&repo, value("--only"), value("--limit")),
        "incremental" => incremental(&repo, &value),
        "vs-git" => vs_git(&repo, repo_path, &value),
        other => eprintln!("unknown mode {other}"),
    }
}

fn source_files(repo: &GitRepo) -> Vec<String> {
    let listing = repo
        .list_commit("HEAD", &ListOptions::default())
        .expect("list HEAD");
    listing
        .entries
        .into_iter()
        .map(|e| e.path)
        .filter(|p| {
            p.rsplit_once('.')
                .is_some_and(|(_, ext)| SOURCE_EXT.contains(&ext))
        })
        .collect()
}

fn blame<'a>(repo: &GitRepo, value: &dyn Fn(&str) -> Option<&'a str>, single: bool) {
    let mut files = source_files(repo);
    if let Some(only) = value("--only") {
        files.retain(|f| f.contains(only));
    }
    if let Some(n) = value("--limit") {
        files.truncate(n.parse().expect("--limit N"));
    }
    let mut opts = BlameOptions::default();
    if let Some(t) = value("--threads") {
        opts.threads = t.parse().expect("--threads N");
    }
    if let Some(b) = value("--budget") {
        let secs: f64 = b.parse().expect("--budget SECS");
        opts.time_budget = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
    }
    if let Some(m) = value("--max-lines") {
        opts.max_lines = m.parse().expect("--max-lines N");
    }
    let head = repo.head().expect("HEAD").expect("a commit").sha;
    let start = Instant::now();
    let mut rows: Vec<(String, Duration, usize, u32, BlameMethod, bool)> = Vec::new();
    if single {
        for f in &files {
            let t = Instant::now();
            let r = repo.blame_file(&head, f);
            let lines = r.as_ref().map_or(0, |r| r.iter().map(|b| b.lines()).sum());
            let n = r.as_ref().map_or(0, Vec::len);
            rows.push((
                f.clone(),
                t.elapsed(),
                n,
                lines,
                BlameMethod::Exact,
                r.is_err(),
            ));
        }
    } else {
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        for b in repo.blame_files_with(&head, &files, &opts) {
            if let Ok(ranges) = &b.ranges {
                use std::hash::Hash;
                b.path.hash(&mut digest);
                for r in ranges {
                    (r.start_line, r.end_line, &r.commit).hash(&mut digest);
                }
            }
            let lines = b
                .ranges
                .as_ref()
                .map_or(0, |r| r.iter().map(|b| b.lines()).sum());
            let n = b.ranges.as_ref().map_or(0, Vec::len);
            rows.push((b.path, b.elapsed, n, lines, b.method, b.ranges.is_err()));
        }
        use std::hash::Hasher;
        println!("digest of every range: {:016x}", digest.finish());
    }
    let total = start.elapsed();
    let mut times: Vec<Duration> = rows.iter().map(|r| r.1).collect();
    times.sort();
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let lines: u64 = rows.iter().map(|r| u64::from(r.3)).sum();
    let sum: Duration = times.iter().sum();
    println!(
        "{} files, {} lines, wall {:.2}s, cpu-sum {:.2}s, per file mean {:.1}ms p50 {:.1}ms p95 {:.1}ms max {:.1}ms, errors {}",
        rows.len(),
        lines,
        total.as_secs_f64(),
        sum.as_secs_f64(),
        sum.as_secs_f64() * 1000.0 / rows.len().max(1) as f64,
        pct(0.5).as_secs_f64() * 1000.0,
        pct(0.95).as_secs_f64() * 1000.0,
        pct(1.0).as_secs_f64() * 1000.0,
        rows.iter().filter(|r| r.5).count(),
    );
    rows.sort_by_key(|r| std::cmp::Reverse(r.1));
    for r in rows.iter().take(5) {
        println!(
            "  slow: {} {:.0}ms {} lines {} ranges {:?}",
            r.0,
            r.1.as_secs_f64() * 1000.0,
            r.3,
            r.2,
            r.4
        );
    }
    for r in rows.iter().filter(|r| r.4 != BlameMethod::Exact) {
        println!("  fallback: {} {:?}", r.0, r.4);
    }
}

fn log(repo: &GitRepo, stats: bool, first_parent: bool, with_files: bool) {
    let opts = LogOptions {
        with_files,
        with_stats: stats,
        first_parent,
        ..LogOptions::default()
    };
    let start = Instant::now();
    let log = repo.log(opts).expect("log");
    let took = start.elapsed();
    let files: usize = log.iter().map(|c| c.files.len()).sum();
    let renames = log
        .iter()
        .flat_map(|c| &c.files)
        .filter(|f| f.old_path.is_some())
        .count();
    println!(
        "{} commits, {} file changes ({} renames), {:.2}s ({:.0} commits/s)",
        log.len(),
        files,
        renames,
        took.as_secs_f64(),
        log.len() as f64 / took.as_secs_f64()
    );
}

fn meta(repo: &GitRepo) {
    let log = repo.log(LogOptions::default()).expect("log");
    let shas: Vec<String> = log.iter().map(|c| c.meta.sha.clone()).collect();
    let start = Instant::now();
    let metas = repo.commit_meta(&shas);
    println!(
        "commit_meta of {} commits: {:.2}s",
        metas.len(),
        start.elapsed().as_secs_f64()
    );
}

fn compare(repo: &GitRepo, only: Option<&str>, limit: Option<&str>) {
    let mut files = source_files(repo);
    if let Some(o) = only {
        files.retain(|f| f.contains(o));
    }
    if let Some(n) = limit {
        files.truncate(n.parse().expect("--limit N"));
    }
    let head = repo.head().expect("HEAD").expect("a commit").sha;
    let opts = BlameOptions {
        time_budget: None,
        threads: 1,
        ..BlameOptions::default()
    };
    let t = Instant::now();
    let ours = repo.blame_files_with(&head, &files, &opts);
    let ours_time = t.elapsed();
    let t = Instant::now();
    let mut differ = 0;
    for b in &ours {
        let theirs = repo.blame_file_gix(&head, &b.path);
        let same = match (&b.ranges, &theirs) {
            (Ok(a), Ok(g)) => a == g,
            _ => false,
        };
        if !same {
            differ += 1;
            if let Err(e) = &b.ranges {
                println!("  error: {e}");
            }
            let lines = |r: &Result<Vec<ken_source::BlameRange>, _>| {
                r.as_ref()
                    .map(|r| r.iter().map(|x| x.lines()).sum::<u32>())
                    .unwrap_or(0)
            };
            println!(
                "  differs: {} (ours {} ranges/{} lines, gix {} ranges/{} lines)",
                b.path,
                b.ranges.as_ref().map_or(0, Vec::len),
                lines(&b.ranges),
                theirs.as_ref().map_or(0, Vec::len),
                lines(&theirs)
            );
        }
    }
    println!(
        "{} files, {} differ; batch {:.2}s, gix per file {:.2}s",
        ours.len(),
        differ,
        ours_time.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
}

fn incremental<'a>(repo: &GitRepo, value: &dyn Fn(&str) -> Option<&'a str>) {
    use std::collections::HashMap;
    use std::sync::Arc;
    let back: usize = value("--back").map_or(100, |v| v.parse().expect("--back N"));
    let mut opts = BlameOptions::default();
    if let Some(t) = value("--threads") {
        opts.threads = t.parse().expect("--threads N");
    }
    let head = repo.head().expect("HEAD").expect("a commit").sha;
    let earlier = repo
        .log(LogOptions {
            first_parent: true,
            max: Some(back + 1),
            ..Default::default()
        })
        .expect("log")
        .pop()
        .expect("an earlier commit")
        .meta
        .sha;
    let blobs = |rev: &str| -> HashMap<String, String> {
        repo.list_commit(rev, &ListOptions::default())
            .expect("list")
            .entries
            .into_iter()
            .map(|e| (e.path, e.id))
            .collect()
    };
    let (then, now) = (blobs(&earlier), blobs(&head));
    let files = source_files(repo);
    let old_files: Vec<&String> = files.iter().filter(|f| then.contains_key(*f)).collect();
    let t = Instant::now();
    let before = repo.blame_files_with(&earlier, &old_files, &opts);
    println!(
        "{} files blamed at {earlier} in {:.2}s",
        before.len(),
        t.elapsed().as_secs_f64()
    );
    let known = ken_source::KnownBlame {
        commit: earlier.clone(),
        files: before
            .into_iter()
            .filter_map(|b| {
                let ranges = b.ranges.ok()?;
                let file = ken_source::KnownFile {
                    blob: then[&b.path].clone(),
                    ranges,
                    approximate: b.method != BlameMethod::Exact,
                };
                Some((b.path, file))
            })
            .collect(),
    };
    let changed: Vec<&String> = files
        .iter()
        .filter(|f| then.get(*f) != now.get(*f))
        .collect();
    let lines = |b: &ken_source::FileBlame| -> Vec<String> {
        b.ranges
            .as_ref()
            .map(|r| {
                r.iter()
                    .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let t = Instant::now();
    let full = repo.blame_files_with(&head, &changed, &opts);
    let full_s = t.elapsed().as_secs_f64();
    let with = BlameOptions {
        known: Some(Arc::new(known)),
        ..opts
    };
    let t = Instant::now();
    let inc = repo.blame_files_with(&head, &changed, &with);
    let inc_s = t.elapsed().as_secs_f64();
    // (lines, of which differ) in files both blamed exactly, and in the others
    let (mut exact, mut approx, mut approx_files) = ((0, 0), (0, 0), 0);
    for (a, b) in full.iter().zip(&inc) {
        let (x, y) = (lines(a), lines(b));
        let n = x.iter().zip(&y).filter(|(p, q)| p != q).count() + x.len().abs_diff(y.len());
        let both_exact = a.method == BlameMethod::Exact && b.method == BlameMethod::Exact;
        let counts = if both_exact { &mut exact } else { &mut approx };
        counts.0 += x.len();
        counts.1 += n;
        approx_files += usize::from(!both_exact);
    }
    println!(
        "{} files changed in {back} commits: full {full_s:.2}s, with the known blame {inc_s:.2}s; exact files: {} of {} lines differ; {approx_files} files not exact (a budget): {} of {} lines differ",
        changed.len(),
        exact.1,
        exact.0,
        approx.1,
        approx.0
    );
}

fn vs_git<'a>(repo: &GitRepo, repo_path: &str, value: &dyn Fn(&str) -> Option<&'a str>) {
    let mut files = source_files(repo);
    if let Some(only) = value("--only") {
        files.retain(|f| f.contains(only));
    }
    if let Some(n) = value("--limit") {
        files.truncate(n.parse().expect("--limit N"));
    }
    let head = repo.head().expect("HEAD").expect("a commit").sha;
    let git = |path: &str| -> Vec<String> {
        let out = std::process::Command::new("git")
            .args(["-C", repo_path, "blame", "--porcelain", &head, "--", path])
            .output()
            .expect("run git blame");
        assert!(out.status.success(), "git blame {path} failed");
        // a header line per group: "<sha> <orig> <final> [<count>]"
        let mut per_line = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut parts = line.split(' ');
            if let (Some(sha), Some(_), Some(_)) = (parts.next(), parts.next(), parts.next())
                && sha.len() == 40
                && sha.bytes().all(|b| b.is_ascii_hexdigit())
            {
                per_line.push(sha.to_string());
            }
        }
        per_line
    };
    let (mut ours_sum, mut git_sum) = (Duration::ZERO, Duration::ZERO);
    let (mut lines, mut differ) = (0usize, 0usize);
    for (i, f) in files.iter().enumerate() {
        let run_ours = || {
            let t = Instant::now();
            let r = repo.blame_file(&head, f).expect("blame");
            (t.elapsed(), r)
        };
        let (ours_t, ours, git_t, theirs);
        if i % 2 == 0 {
            (ours_t, ours) = run_ours();
            let t = Instant::now();
            theirs = git(f);
            git_t = t.elapsed();
        } else {
            let t = Instant::now();
            theirs = git(f);
            git_t = t.elapsed();
            (ours_t, ours) = run_ours();
        }
        let ours: Vec<&str> = ours
            .iter()
            .flat_map(|r| std::iter::repeat_n(r.commit.as_str(), r.lines() as usize))
            .collect();
        let d = ours
            .iter()
            .zip(&theirs)
            .filter(|(a, b)| **a != b.as_str())
            .count()
            + ours.len().abs_diff(theirs.len());
        lines += theirs.len();
        differ += d;
        ours_sum += ours_t;
        git_sum += git_t;
        println!(
            "{f}: ours {:.0} ms, git {:.0} ms, {} lines, {d} differ",
            ours_t.as_secs_f64() * 1000.0,
            git_t.as_secs_f64() * 1000.0,
            theirs.len()
        );
    }
    println!(
        "{} files, {lines} lines: ours {:.2}s, git blame {:.2}s (ours/git {:.2}), {differ} lines differ",
        files.len(),
        ours_sum.as_secs_f64(),
        git_sum.as_secs_f64(),
        ours_sum.as_secs_f64() / git_sum.as_secs_f64().max(1e-9)
    );
}
