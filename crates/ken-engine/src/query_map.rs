//! Dense retrieval's query map, learned per repository (adapt.rs) and
//! applied to each query vector before the vector search (semantic.rs):
//! `q ↦ normalize(q + U·Vᵀ·(q − μ))`, stored with the index.

use base64::Engine as _;
use ken_store::DenseAdapter;

/// A learned query map `q ↦ normalize(q + U·Vᵀ·(q − μ))`.
#[derive(Debug, Clone, PartialEq)]
pub struct Adapter {
    pub(crate) dim: usize,
    pub(crate) rank: usize,
    /// `dim × rank`, row-major.
    pub(crate) u: Vec<f32>,
    pub(crate) v: Vec<f32>,
    /// μ: the mean query it was learned from.
    pub(crate) mean: Vec<f32>,
}

impl Adapter {
    pub(crate) fn new(dim: usize, rank: usize, mean: Vec<f32>, seed: u64) -> Adapter {
        let mut rng = SplitMix(seed);
        let scale = 1.0 / (dim as f32).sqrt();
        Adapter {
            dim,
            rank,
            u: vec![0.0; dim * rank],
            v: (0..dim * rank).map(|_| rng.normal() * scale).collect(),
            mean,
        }
    }

    /// The adapted query, unit length (a query of another length is
    /// returned as it is).
    pub fn apply(&self, q: &[f32]) -> Vec<f32> {
        if q.len() != self.dim {
            return q.to_vec();
        }
        let a = self.project(q);
        let mut z = self.lift(q, &a);
        ken_embed::l2_normalize(&mut z);
        z
    }

    /// `Vᵀ·(q − μ)`.
    pub(crate) fn project(&self, q: &[f32]) -> Vec<f32> {
        let mut a = vec![0.0f32; self.rank];
        for (i, (x, m)) in q.iter().zip(&self.mean).enumerate() {
            let row = &self.v[i * self.rank..(i + 1) * self.rank];
            for (aj, vj) in a.iter_mut().zip(row) {
                *aj += (x - m) * vj;
            }
        }
        a
    }

    /// `q + U·a`.
    pub(crate) fn lift(&self, q: &[f32], a: &[f32]) -> Vec<f32> {
        q.iter()
            .enumerate()
            .map(|(i, x)| {
                let row = &self.u[i * self.rank..(i + 1) * self.rank];
                x + row.iter().zip(a).map(|(u, a)| u * a).sum::<f32>()
            })
            .collect()
    }

    /// The factors as stored: base64 of U, V then μ, f32 little-endian.
    pub fn encode(&self) -> String {
        let bytes: Vec<u8> = self
            .u
            .iter()
            .chain(&self.v)
            .chain(&self.mean)
            .flat_map(|x| x.to_le_bytes())
            .collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// What [`Adapter::encode`] wrote (None: not a map of this shape).
    pub fn decode(dim: usize, rank: usize, text: &str) -> Option<Adapter> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        let n = dim * rank;
        if dim == 0 || rank == 0 || bytes.len() != 4 * (2 * n + dim) {
            return None;
        }
        let floats: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if floats.iter().any(|x| !x.is_finite()) {
            return None;
        }
        Some(Adapter {
            dim,
            rank,
            u: floats[..n].to_vec(),
            v: floats[n..2 * n].to_vec(),
            mean: floats[2 * n..].to_vec(),
        })
    }

    /// The map a stored record holds, when it was adopted for `model`.
    pub fn from_record(record: &DenseAdapter, model: &str) -> Option<Adapter> {
        if !record.adopted || record.model != model {
            return None;
        }
        Adapter::decode(record.dim, record.rank, &record.weights)
    }
}

/// A small deterministic generator (SplitMix64).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A standard normal draw (Box–Muller).
    pub(crate) fn normal(&mut self) -> f32 {
        let u1 = ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_round_trips_through_its_stored_form() {
        let mut a = Adapter::new(6, 3, vec![0.5; 6], 42);
        a.u.iter_mut()
            .enumerate()
            .for_each(|(i, u)| *u = i as f32 * 0.25 - 1.0);
        let text = a.encode();
        assert_eq!(Adapter::decode(6, 3, &text), Some(a.clone()));
        // the wrong shape, or not base64 at all, is refused
        assert_eq!(Adapter::decode(6, 2, &text), None);
        assert_eq!(Adapter::decode(6, 3, "not base64!"), None);
        // a query of another length passes unchanged
        assert_eq!(a.apply(&[1.0, 0.0]), vec![1.0, 0.0]);
        let record = DenseAdapter {
            model: "m".into(),
            adopted: true,
            dim: 6,
            rank: 3,
            weights: text,
            ..Default::default()
        };
        assert_eq!(Adapter::from_record(&record, "m"), Some(a));
        assert_eq!(Adapter::from_record(&record, "other"), None);
        let kept_out = DenseAdapter {
            adopted: false,
            ..record
        };
        assert_eq!(Adapter::from_record(&kept_out, "m"), None);
    }
}
