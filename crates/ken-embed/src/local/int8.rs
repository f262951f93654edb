//! Int8 matrix products for the encoder's dense layers (weights quantized
//! once per output column, activations per row at each product), with an
//! AVX-512 VNNI kernel: `vpdpbusd` does 64 byte multiply-adds per
//! instruction against 16 f32 FMAs, so the dense layers can run past the
//! f32 roofline.
//!
//! `c[i][j] = sa[i] · sb[j] · Σ_k qa[i][k] · qb[k][j]`, where `qa` are the
//! row's activations scaled into −127..127 and `qb` the column's weights
//! likewise. The kernel multiplies unsigned by signed bytes, so `qa + 128`
//! is used and `128 · Σ_k qb[k][j]` (kept per column) is taken off after.

use rayon::prelude::*;

/// Columns per packed panel (one 512-bit register of i32 sums).
const PANEL: usize = 16;
/// Rows per kernel call.
const MR: usize = 6;
/// Panels per kernel call (64 columns).
const NP: usize = 4;

/// Whether this CPU runs the VNNI kernel.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A `k × n` weight matrix quantized per column and packed for the kernel:
/// panel-major (16 columns), then groups of 4 rows, then column, then row.
pub(crate) struct QMatrix {
    k: usize,
    n: usize,
    packed: Vec<i8>,
    scales: Vec<f32>,
    /// `128 · Σ_k qb[k][j]`, the offset of unsigned activations.
    offsets: Vec<i32>,
}

impl QMatrix {
    /// Quantizes a row-major `k × n` matrix; None when the shape does not
    /// fit the kernel (`k` a multiple of 4, `n` of 16).
    pub(crate) fn quantize(b: &[f32], k: usize, n: usize) -> Option<QMatrix> {
        if !k.is_multiple_of(4) || !n.is_multiple_of(PANEL) || b.len() != k * n || k == 0 {
            return None;
        }
        let mut scales = vec![0f32; n];
        for row in b.chunks_exact(n) {
            for (s, &x) in scales.iter_mut().zip(row) {
                *s = s.max(x.abs());
            }
        }
        for s in scales.iter_mut() {
            *s = if *s > 0.0 { *s / 127.0 } else { 1.0 };
        }
        let q = |r: usize, c: usize| -> i8 {
            (b[r * n + c] / scales[c]).round().clamp(-127.0, 127.0) as i8
        };
        let mut packed = vec![0i8; k * n];
        let mut at = 0;
        for p in 0..n / PANEL {
            for g in 0..k / 4 {
                for c in 0..PANEL {
                    for t in 0..4 {
                        packed[at] = q(4 * g + t, p * PANEL + c);
                        at += 1;
                    }
                }
            }
        }
        let offsets = (0..n)
            .map(|c| 128 * (0..k).map(|r| q(r, c) as i32).sum::<i32>())
            .collect();
        Some(QMatrix {
            k,
            n,
            packed,
            scales,
            offsets,
        })
    }

    fn panel(&self, p: usize) -> &[i8] {
        let len = self.k * PANEL;
        &self.packed[p * len..(p + 1) * len]
    }
}

/// Activations quantized per row, as unsigned bytes (`q + 128`), rows
/// padded to a multiple of `MR` with zeros (128).
struct QRows {
    bytes: Vec<u8>,
    scales: Vec<f32>,
}

fn quantize_rows(a: &[f32], m: usize, k: usize) -> QRows {
    let padded = m.div_ceil(MR) * MR;
    let mut bytes = vec![128u8; padded * k];
    let mut scales = vec![0f32; padded];
    bytes
        .par_chunks_mut(k)
        .zip(scales.par_iter_mut())
        .zip(a.par_chunks(k))
        .for_each(|((out, s), row)| {
            #[cfg(target_arch = "x86_64")]
            if available() {
                // SAFETY: the CPU has AVX-512 F and BW (checked above).
                *s = unsafe { quantize_row_v4(row, out) };
                return;
            }
            *s = quantize_row(row, out);
        });
    QRows { bytes, scales }
}

/// One row of activations as `q + 128` bytes; returns its scale.
#[inline(always)]
fn quantize_row(row: &[f32], out: &mut [u8]) -> f32 {
    let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
    let s = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inv = 1.0 / s;
    for (o, &x) in out.iter_mut().zip(row) {
        *o = ((x * inv).round().clamp(-127.0, 127.0) as i32 + 128) as u8;
    }
    s
}

/// [`quantize_row`] compiled for AVX-512, where it vectorizes and
/// `f32::round` is an instruction sequence rather than a call to libm's
/// `roundf` (11 % of an embedding run's time on the baseline target).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantize_row_v4(row: &[f32], out: &mut [u8]) -> f32 {
    quantize_row(row, out)
}

/// `c (m×n) = a (m×k) · b`, on every core. The VNNI kernel when the CPU has
/// it, else a plain loop (tests and other CPUs; the encoder only quantizes
/// when [`available`]).
pub(crate) fn matmul(a: &[f32], b: &QMatrix, c: &mut [f32], m: usize) {
    let (k, n) = (b.k, b.n);
    assert!(a.len() >= m * k && c.len() >= m * n);
    if m == 0 {
        return;
    }
    let qa = quantize_rows(&a[..m * k], m, k);
    let vnni = available();
    // tasks of 8 kernel rows × all columns
    let rows_per_task = MR * 8;
    c[..m * n]
        .par_chunks_mut(rows_per_task * n)
        .enumerate()
        .for_each(|(t, ct)| {
            let r0 = t * rows_per_task;
            let rows = ct.len() / n;
            if vnni {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: the CPU has AVX-512 F/BW/VNNI (checked by `available`);
                // `block` reads rows r0..r0+rows (padded to MR) of `qa` and
                // writes `ct`, `rows × n`.
                unsafe {
                    block_vnni(&qa, b, ct, r0, rows)
                };
            } else {
                block_scalar(&qa, b, ct, r0, rows);
            }
        });
}

fn block_scalar(qa: &QRows, b: &QMatrix, c: &mut [f32], r0: usize, rows: usize) {
    let (k, n) = (b.k, b.n);
    for r in 0..rows {
        let arow = &qa.bytes[(r0 + r) * k..(r0 + r + 1) * k];
        for p in 0..n / PANEL {
            let panel = b.panel(p);
            for col in 0..PANEL {
                let mut acc = 0i32;
                for g in 0..k / 4 {
                    for t in 0..4 {
                        acc += arow[4 * g + t] as i32 * panel[g * 64 + col * 4 + t] as i32;
                    }
                }
                let j = p * PANEL + col;
                c[r * n + j] = (acc - b.offsets[j]) as f32 * qa.scales[r0 + r] * b.scales[j];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn block_vnni(qa: &QRows, b: &QMatrix, c: &mut [f32], r0: usize, rows: usize) {
    let n = b.n;
    let panels = n / PANEL;
    let mut p = 0;
    while p < panels {
        let np = (panels - p).min(NP);
        let mut r = 0;
        while r < rows {
            // SAFETY: as `block_vnni`'s caller: qa holds rows up to a multiple of MR.
            unsafe {
                match np {
                    4 => kernel::<4>(qa, b, c, r0, r, rows, p),
                    3 => kernel::<3>(qa, b, c, r0, r, rows, p),
                    2 => kernel::<2>(qa, b, c, r0, r, rows, p),
                    _ => kernel::<1>(qa, b, c, r0, r, rows, p),
                }
            }
            r += MR;
        }
        p += np;
    }
}

/// `MR` rows (from `r` within the task) × `P` panels (from `p`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[allow(clippy::too_many_arguments)]
unsafe fn kernel<const P: usize>(
    qa: &QRows,
    b: &QMatrix,
    c: &mut [f32],
    r0: usize,
    r: usize,
    rows: usize,
    p: usize,
) {
    use std::arch::x86_64::*;
    // SAFETY: rows r0+r..r0+r+MR of `qa` exist (padded to MR), panels p..p+P
    // of `b` exist, each holding k/4 groups of 64 bytes; rows below `rows`
    // of `c` (the task's block) are written, 16 columns per panel.
    unsafe {
        let (k, n) = (b.k, b.n);
        let mut acc = [[_mm512_setzero_si512(); P]; MR];
        let a_base = qa.bytes.as_ptr().add((r0 + r) * k);
        let panels: [*const i8; P] = std::array::from_fn(|i| b.panel(p + i).as_ptr());
        for g in 0..k / 4 {
            let bv: [__m512i; P] =
                std::array::from_fn(|i| _mm512_loadu_si512(panels[i].add(g * 64) as *const _));
            for (ri, acc_r) in acc.iter_mut().enumerate() {
                let word = (a_base.add(ri * k + 4 * g) as *const i32).read_unaligned();
                let av = _mm512_set1_epi32(word);
                for (a, b) in acc_r.iter_mut().zip(&bv) {
                    *a = _mm512_dpbusd_epi32(*a, av, *b);
                }
            }
        }
        for (ri, acc_r) in acc.iter().enumerate() {
            let row = r + ri;
            if row >= rows {
                break;
            }
            let sa = _mm512_set1_ps(qa.scales[r0 + row]);
            for (i, &sum) in acc_r.iter().enumerate() {
                let j = (p + i) * PANEL;
                let off = _mm512_loadu_si512(b.offsets.as_ptr().add(j) as *const _);
                let sb = _mm512_loadu_ps(b.scales.as_ptr().add(j));
                let v = _mm512_cvtepi32_ps(_mm512_sub_epi32(sum, off));
                let out = _mm512_mul_ps(_mm512_mul_ps(v, sa), sb);
                _mm512_storeu_ps(c.as_mut_ptr().add(row * n + j), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn pseudo(seed: u64, len: usize) -> Vec<f32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect()
    }

    fn exact(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
            }
        }
        c
    }

    #[test]
    fn shapes_the_kernel_cannot_take_are_refused() {
        assert!(QMatrix::quantize(&[0.0; 6 * 16], 6, 16).is_none());
        assert!(QMatrix::quantize(&[0.0; 8 * 10], 8, 10).is_none());
        assert!(QMatrix::quantize(&[0.0; 8 * 16], 8, 16).is_some());
    }

    #[test]
    fn int8_product_is_close_to_f32_and_both_paths_agree() {
        // m not a multiple of MR, n with a partial group of panels
        for (m, k, n) in [(13, 64, 80), (1, 384, 1152), (50, 1536, 384)] {
            let a = pseudo(1, m * k);
            let b = pseudo(2, k * n);
            let q = QMatrix::quantize(&b, k, n).unwrap();
            let want = exact(&a, &b, m, k, n);
            let mut got = vec![0f32; m * n];
            matmul(&a, &q, &mut got, m);
            let qa = quantize_rows(&a, m, k);
            let mut scalar = vec![0f32; m * n];
            block_scalar(&qa, &q, &mut scalar, 0, m);
            // the two paths do the same integer sums
            for (x, y) in got.iter().zip(&scalar) {
                assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{x} vs {y}");
            }
            // and int8 error is small relative to the products' spread
            let rms = (want.iter().map(|x| x * x).sum::<f32>() / want.len() as f32).sqrt();
            let err = (got
                .iter()
                .zip(&want)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f32>()
                / want.len() as f32)
                .sqrt();
            assert!(err < 0.02 * rms, "{m}x{k}x{n}: rms error {err} vs {rms}");
        }
    }
}
