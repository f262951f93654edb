//! Timing of the people layer on real repositories.
//!
//! ```text
//! cargo build --release -p ken-source --examples
//! people_bench blame REPO [--threads N] [--budget SECS] [--max-lines N] [--limit N] [--only SUBSTR] [--single]
//! people_bench log REPO [--stats] [--first-parent] [--no-files]
//! people_bench meta REPO
//! people_bench compare REPO [--only SUBSTR] [--limit N]
//! people_bench show REPO PATH
//! ```
//!
//! `blame` blames every source file of HEAD (by extension: the languages
//! the chunker knows) and prints totals, per-file percentiles, the slowest
//! files and the files that fell back. `--single` blames file by file with
//! `blame_file` (no budget, one thread) instead of the batch.
//! `log` walks the whole history from HEAD with changed files.
//! `compare` checks the batch blame against gix's per-file `blame::file`
//! and prints the files where they differ, and the time of each.

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
        for b in repo.blame_files_with(&head, &files, &opts) {
            let lines = b
                .ranges
                .as_ref()
                .map_or(0, |r| r.iter().map(|b| b.lines()).sum());
            let n = b.ranges.as_ref().map_or(0, Vec::len);
            rows.push((b.path, b.elapsed, n, lines, b.method, b.ranges.is_err()));
        }
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
