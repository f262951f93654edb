//! Element-wise kernels of the transformer, fused and vectorised.
//!
//! Each public function is compiled three times — baseline x86-64, AVX2+FMA,
//! AVX-512 — and picks the best the CPU has at run time (the workspace does
//! not build with `-C target-cpu=native`). The bodies are plain loops written
//! so that LLVM vectorises them: no libm calls (exp and erf are polynomial /
//! rational approximations accurate to ~1e-7), and reductions use 16
//! independent accumulators.

/// Defines `pub fn $name(args)` dispatching at run time to AVX-512, AVX2+FMA or baseline code.
macro_rules! multiversion {
    ($(#[$m:meta])* pub fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn inner($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
                unsafe fn v4($($arg: $ty),*) { inner($($arg),*) }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn v3($($arg: $ty),*) { inner($($arg),*) }
                match simd_level() {
                    // SAFETY: the CPU was checked to have these features.
                    SimdLevel::V4 => return unsafe { v4($($arg),*) },
                    SimdLevel::V3 => return unsafe { v3($($arg),*) },
                    SimdLevel::Base => {}
                }
            }
            inner($($arg),*)
        }
    };
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SimdLevel {
    Base,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    V3,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    V4,
}

/// Set before the first embedding to keep the kernels off AVX-512.
static NO_AVX512: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps the local embedder's kernels off AVX-512 (AVX2 at most), for
/// machines that slow down under it; takes effect when called before the
/// first embedding of the process.
pub fn forbid_avx512() {
    NO_AVX512.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn simd_level() -> SimdLevel {
    use std::sync::OnceLock;
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if !NO_AVX512.load(std::sync::atomic::Ordering::Relaxed)
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("fma")
            {
                return SimdLevel::V4;
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                return SimdLevel::V3;
            }
        }
        SimdLevel::Base
    })
}

const LANES: usize = 16;

/// e^x for x in about [-87, 88], relative error ~2e-7; vectorisable (no libm).
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    // Taylor series of e^r on |r| <= ln2/2, to degree 7.
    let p = 1.0 / 5040.0;
    let p = p * r + 1.0 / 720.0;
    let p = p * r + 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let p = p * r + 1.0;
    let p = p * r + 1.0;
    let scale = f32::from_bits((((n as i32) + 127) << 23) as u32);
    p * scale
}

/// erf(x), absolute error ~1e-7 (the rational approximation Eigen uses for f32).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = -2.726_142_3e-10_f32;
    let p = p * x2 + 2.770_681_4e-8;
    let p = p * x2 + -2.101_024e-6;
    let p = p * x2 + -5.692_506_4e-5;
    let p = p * x2 + -7.349_906_3e-4;
    let p = p * x2 + -2.954_6e-3;
    let p = p * x2 + -1.609_603_3e-2;
    let p = p * x;
    let q = -1.456_607_2e-5_f32;
    let q = q * x2 + -2.133_740_6e-4;
    let q = q * x2 + -1.682_827e-3;
    let q = q * x2 + -7.373_329_5e-3;
    let q = q * x2 + -1.426_474e-2;
    p / q
}

/// tanh(x) from exp, for the tanh approximation of GELU.
#[inline(always)]
fn tanh(x: f32) -> f32 {
    let e = exp(2.0 * x.clamp(-15.0, 15.0));
    (e - 1.0) / (e + 1.0)
}

#[inline(always)]
fn sum(xs: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for i in 0..LANES {
            acc[i] += c[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for &v in chunks.remainder() {
        s += v;
    }
    s
}

#[inline(always)]
fn max(xs: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for i in 0..LANES {
            acc[i] = acc[i].max(c[i]);
        }
    }
    let mut m = acc.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for &v in chunks.remainder() {
        m = m.max(v);
    }
    m
}

/// Sum of squared deviations from `mean`.
#[inline(always)]
fn sq_dev(xs: &[f32], mean: f32) -> f32 {
    let mut acc = [0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for i in 0..LANES {
            let d = c[i] - mean;
            acc[i] += d * d;
        }
    }
    let mut s: f32 = acc.iter().sum();
    for &v in chunks.remainder() {
        s += (v - mean) * (v - mean);
    }
    s
}

/// Which activation the feed-forward block uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Exact GELU, `0.5 x (1 + erf(x / sqrt 2))` (BERT's "gelu").
    Gelu,
    /// The tanh approximation ("gelu_new", "gelu_pytorch_tanh").
    GeluTanh,
    Relu,
}

multiversion! {
    /// `rows[i] = act(rows[i] + bias)` for each row of `bias.len()` values.
    pub fn bias_act(rows: &mut [f32], bias: &[f32], act: Act) {
        let n = bias.len();
        for row in rows.chunks_exact_mut(n) {
            match act {
                Act::Gelu => {
                    for (v, &b) in row.iter_mut().zip(bias) {
                        let x = *v + b;
                        *v = 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
                    }
                }
                Act::GeluTanh => {
                    const C: f32 = 0.797_884_6; // sqrt(2 / pi)
                    for (v, &b) in row.iter_mut().zip(bias) {
                        let x = *v + b;
                        *v = 0.5 * x * (1.0 + tanh(C * (x + 0.044_715 * x * x * x)));
                    }
                }
                Act::Relu => {
                    for (v, &b) in row.iter_mut().zip(bias) {
                        *v = (*v + b).max(0.0);
                    }
                }
            }
        }
    }
}

multiversion! {
    /// `rows[i] += bias` for each row of `bias.len()` values.
    pub fn add_bias(rows: &mut [f32], bias: &[f32]) {
        let n = bias.len();
        for row in rows.chunks_exact_mut(n) {
            for (v, &b) in row.iter_mut().zip(bias) {
                *v += b;
            }
        }
    }
}

multiversion! {
    /// Residual + bias + layer norm, in place: `x = LN(x + y + bias) * gamma + beta`, row by row.
    pub fn residual_layer_norm(
        x: &mut [f32],
        y: &[f32],
        bias: &[f32],
        gamma: &[f32],
        beta: &[f32],
        eps: f32,
    ) {
        let n = bias.len();
        for (xr, yr) in x.chunks_exact_mut(n).zip(y.chunks_exact(n)) {
            for ((v, &w), &b) in xr.iter_mut().zip(yr).zip(bias) {
                *v += w + b;
            }
            norm_row(xr, gamma, beta, eps);
        }
    }
}

multiversion! {
    /// Layer norm in place, row by row.
    pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
        for xr in x.chunks_exact_mut(gamma.len()) {
            norm_row(xr, gamma, beta, eps);
        }
    }
}

#[inline(always)]
fn norm_row(xr: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = xr.len() as f32;
    let mean = sum(xr) / n;
    let var = sq_dev(xr, mean) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, &g), &b) in xr.iter_mut().zip(gamma).zip(beta) {
        *v = (*v - mean) * inv * g + b;
    }
}

multiversion! {
    /// Softmax of each row of `width` values, in place.
    pub fn softmax_rows(s: &mut [f32], width: usize) {
        for row in s.chunks_exact_mut(width) {
            let m = max(row);
            for v in row.iter_mut() {
                *v = exp(*v - m);
            }
            let inv = 1.0 / sum(row);
            for v in row.iter_mut() {
                *v *= inv;
            }
        }
    }
}

multiversion! {
    /// `acc += src`.
    pub fn add_assign(acc: &mut [f32], src: &[f32]) {
        for (a, &s) in acc.iter_mut().zip(src) {
            *a += s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate() {
        let mut x = -80.0f32;
        while x < 80.0 {
            let (a, b) = (exp(x), x.exp());
            assert!(((a - b) / b).abs() < 1e-6, "exp({x}) = {a}, want {b}");
            x += 0.37;
        }
    }

    #[test]
    fn erf_is_accurate() {
        for i in -600..=600 {
            let x = i as f32 / 100.0;
            let want = libm_erf(x as f64);
            assert!((erf(x) as f64 - want).abs() < 2e-6, "erf({x})");
        }
    }

    // erf via its series / continued fraction is overkill here; a high-precision
    // numerical integral of 2/sqrt(pi) e^{-t^2} is enough for a test.
    fn libm_erf(x: f64) -> f64 {
        let steps = 20_000;
        let h = x / steps as f64;
        let f = |t: f64| (-t * t).exp();
        let mut s = f(0.0) + f(x);
        for i in 1..steps {
            let t = i as f64 * h;
            s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(t);
        }
        s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn softmax_and_layer_norm() {
        let mut s = vec![1.0, 2.0, 3.0, 1.0, 1.0, 1.0];
        softmax_rows(&mut s, 3);
        let e: f32 = (1.0f32.exp() + 2.0f32.exp() + 3.0f32.exp()).recip();
        assert!((s[2] - 3.0f32.exp() * e).abs() < 1e-6);
        assert!((s[3] - 1.0 / 3.0).abs() < 1e-6);

        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut x, &[1.0; 4], &[0.0; 4], 0.0);
        let m: f32 = x.iter().sum::<f32>() / 4.0;
        let v: f32 = x.iter().map(|a| a * a).sum::<f32>() / 4.0;
        assert!(m.abs() < 1e-6 && (v - 1.0).abs() < 1e-5);
    }
}
