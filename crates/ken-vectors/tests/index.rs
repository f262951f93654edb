//! Exact and approximate search against brute force, and the file format.

use ken_vectors::{
    AnyIndex, FlatIndex, IvfIndex, IvfParams, VectorSet, exact_f32, open, synthetic, write,
};

/// `n` data vectors and `m` queries from the same distribution.
fn data(
    n: usize,
    m: usize,
    dim: usize,
    clusters: usize,
    spread: f32,
    seed: u64,
) -> (VectorSet, VectorSet) {
    let all = synthetic(n + m, dim, clusters, spread, seed);
    let mut set = VectorSet::new(dim);
    let mut queries = VectorSet::new(dim);
    for i in 0..n + m {
        if i < n {
            set.push(all.ids[i], all.row(i))
        } else {
            queries.push(all.ids[i], all.row(i))
        }
    }
    (set, queries)
}

fn recall(
    set: &VectorSet,
    queries: &VectorSet,
    k: usize,
    search: impl Fn(&[f32]) -> Vec<u64>,
) -> f64 {
    let mut hit = 0;
    for q in 0..queries.len() {
        let truth: Vec<u64> = exact_f32(set, queries.row(q), k)
            .into_iter()
            .map(|n| n.id)
            .collect();
        let got = search(queries.row(q));
        hit += truth.iter().filter(|t| got.contains(t)).count();
    }
    hit as f64 / (queries.len() * k) as f64
}

#[test]
fn flat_is_exact_up_to_int8_rounding() {
    let (set, queries) = data(5000, 50, 64, 50, 0.5, 7);
    let flat = FlatIndex::build(&set);
    let r = recall(&set, &queries, 10, |q| {
        flat.search(q, 10)
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect()
    });
    // the rows are kept in int8 only: neighbours whose cosines differ by
    // less than the rounding can swap places, and nothing else may
    assert!(r >= 0.95, "recall {r}");
    let exact_of = |id: u64, q: &[f32]| -> f32 {
        let row = set.ids.iter().position(|x| *x == id).unwrap();
        set.row(row).iter().zip(q).map(|(a, b)| a * b).sum()
    };
    for q in 0..queries.len() {
        let q = queries.row(q);
        let got = flat.search(q, 10).unwrap();
        let worst = got
            .iter()
            .map(|n| exact_of(n.id, q))
            .fold(f32::MAX, f32::min);
        for t in exact_f32(&set, q, 10) {
            if !got.iter().any(|n| n.id == t.id) {
                assert!(
                    t.score - worst < 0.01,
                    "a miss that is not a near tie: {t:?} against {worst}"
                );
            }
        }
    }
    // scores are cosines of the f32 query with the int8 rows, best first:
    // within the rows' rounding (half a step of max/127 per value) of f32
    let res = flat.search(queries.row(0), 10).unwrap();
    assert!(res.windows(2).all(|w| w[0].score >= w[1].score));
    let truth = exact_f32(&set, queries.row(0), 1);
    assert!(
        (res[0].score - truth[0].score).abs() < 5e-3,
        "{res:?} {truth:?}"
    );
}

#[test]
fn ivf_calibrates_its_probes_to_the_target_recall() {
    // overlapping clusters: one list is not enough
    let (set, queries) = data(20_000, 100, 64, 200, 1.2, 11);
    let ivf = IvfIndex::build(&set, IvfParams::default());
    let few = recall(&set, &queries, 10, |q| {
        ivf.search(q, 10, 1)
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect()
    });
    let default = recall(&set, &queries, 10, |q| {
        ivf.search(q, 10, ivf.default_nprobe())
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect()
    });
    let all = recall(&set, &queries, 10, |q| {
        ivf.search(q, 10, ivf.lists())
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect()
    });
    assert!(
        few < ken_vectors::TARGET_RECALL,
        "one probe is not enough here: {few}"
    );
    assert!(ivf.default_nprobe() > 1 && ivf.default_nprobe() < ivf.lists());
    // calibrated on the set's own rows; new queries from the same distribution
    assert!(
        default >= ken_vectors::TARGET_RECALL - 0.02,
        "calibrated probes: recall {default}"
    );
    // every list is the exact scan, up to the near ties the flat test allows
    assert!(all >= 0.98, "all lists is exhaustive: {all}");
}

#[test]
fn files_round_trip_and_reject_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let set = synthetic(3000, 32, 30, 0.5, 3);
    let q = set.row(17).to_vec();
    for (name, index) in [
        ("flat", AnyIndex::Flat(FlatIndex::build(&set))),
        (
            "ivf",
            AnyIndex::Ivf(IvfIndex::build(
                &set,
                IvfParams {
                    lists: Some(20),
                    ..Default::default()
                },
            )),
        ),
    ] {
        let path = dir.path().join(name);
        let before = index.search(&q, 5).unwrap();
        write(&path, &index).unwrap();
        let mapped = open(&path).unwrap();
        assert_eq!(mapped.len(), 3000);
        assert_eq!(mapped.dim(), 32);
        assert_eq!(mapped.search(&q, 5).unwrap(), before, "{name}");
        assert_eq!(before[0].id, 17, "a vector is its own nearest neighbour");
    }
    let bad = dir.path().join("bad");
    std::fs::write(&bad, b"not a vector file at all, no no no").unwrap();
    assert!(open(&bad).is_err());
    let flat = dir.path().join("flat");
    let bytes = std::fs::read(&flat).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() - 10]).unwrap();
    assert!(open(&bad).is_err(), "truncated file");
}

#[test]
fn wrong_dimension_is_an_error() {
    let set = synthetic(100, 16, 4, 0.5, 1);
    let flat = FlatIndex::build(&set);
    assert!(flat.search(&[0.0; 8], 3).is_err());
    let empty = FlatIndex::build(&VectorSet::new(16));
    assert!(empty.search(&[0.1; 16], 3).unwrap().is_empty());
}

#[test]
fn files_of_any_dimension_round_trip() {
    // the file layout rounds sections up; dimensions that are not a
    // multiple of four left the file short of its layout's end
    let dir = tempfile::tempdir().unwrap();
    for (rows, dim) in [(3, 3), (5, 1), (50, 3), (7, 5), (9, 7), (50, 384)] {
        let set = synthetic(rows, dim, 2, 0.5, 9);
        let index = AnyIndex::Flat(FlatIndex::build(&set));
        let path = dir.path().join(format!("d{dim}-{rows}.vec"));
        ken_vectors::write(&path, &index).unwrap();
        let back = ken_vectors::open(&path).unwrap();
        assert_eq!((back.len(), back.dim()), (rows, dim));
        let q = set.row(rows / 2).to_vec();
        let ids =
            |i: &AnyIndex| -> Vec<u64> { i.search(&q, 5).unwrap().iter().map(|n| n.id).collect() };
        assert_eq!(ids(&back), ids(&index), "{rows} rows of {dim}");
    }
}
