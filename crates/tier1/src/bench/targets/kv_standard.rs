//! `kv_standard` (memory goal): append `steps` decode tokens to a KV cache of `layers` layers
//! (`active_layers` of them written). Baseline stores bf16 values; optimized stores FP8 E4M3 codes
//! with one f32 scale per (layer, position) (absmax mapped to 448), about half the bytes.
//! Verification dequantizes every written token.

use super::math::dim;
use super::params::ShapeParams;
use super::variant::{signature, tensor};
use crate::bench::backend::{BackendError, Shapes, Variant, VariantRun, Workload};
use crate::bench::result::Work;
use serde::Deserialize;
use std::sync::Arc;

/// Source of the baseline (repo-relative).
pub(crate) const FILE: &str = "crates/tier1/src/bench/targets/kv_standard.rs";
/// Largest finite E4M3 value.
pub(crate) const E4M3_MAX: f32 = 448.0;

/// Problem size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Params {
    /// Batch.
    pub(crate) batch: usize,
    /// Layers of the cache.
    pub(crate) layers: usize,
    /// KV heads.
    pub(crate) heads: usize,
    /// Cache capacity in tokens.
    pub(crate) max_seq: usize,
    /// Head dimension.
    pub(crate) head_dim: usize,
    /// Tokens appended per run.
    pub(crate) steps: usize,
    /// Layers written per token.
    pub(crate) active_layers: usize,
}

impl ShapeParams for Params {
    const KEY: &'static str = "kv_standard";

    fn check(self) -> Result<Self, BackendError> {
        for (name, v, max) in [
            ("steps", self.steps, self.max_seq),
            ("active_layers", self.active_layers, self.layers),
        ] {
            if v > max {
                return Err(BackendError::Shape {
                    key: Self::KEY.into(),
                    param: name.into(),
                    message: format!("expected at most {max}, found {v}"),
                });
            }
        }
        Ok(self)
    }
}

impl Params {
    /// Values of one token in one layer (K and V): `2 × batch × heads × head_dim`.
    pub(crate) fn token_elems(&self) -> usize {
        2 * self.batch * self.heads * self.head_dim
    }

    /// Elements of the whole cache `[layers, 2, batch, heads, max_seq, head_dim]`.
    pub(crate) fn cache_elems(&self) -> usize {
        self.layers * self.max_seq * self.token_elems()
    }
}

/// New K/V values: `[steps, active_layers, 2, batch, heads, head_dim]`.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// Sizes.
    pub(crate) p: Params,
    /// Token values.
    pub(crate) kv: Vec<f32>,
}

/// Seeded inputs.
pub(crate) fn inputs(p: Params, seed: u64) -> Inputs {
    let mut r = crate::bench::rng::Rng::new(seed, 30);
    Inputs {
        p,
        kv: r.normal_vec(p.steps * p.active_layers * p.token_elems(), 2.0),
    }
}

/// f32 to bf16 bits, round to nearest even.
pub(crate) fn to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// bf16 bits to f32.
pub(crate) fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// f32 (already scaled into ±448) to an E4M3 code, round to nearest even, saturating.
pub(crate) fn to_e4m3(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7F;
    }
    let mag = if a < 2f32.powi(-6) {
        // Subnormal: multiples of 2^-9; code 8 is the smallest normal, which is the same value.
        let q = a * 512.0;
        let r = q.round_ties_even();
        r as u8
    } else {
        let b = a.to_bits();
        let e = ((b >> 23) as i32) - 127 + 7;
        let m = b & 0x7F_FFFF;
        let mut code = ((e as u32) << 3) | (m >> 20);
        let rem = m & 0xF_FFFF;
        if rem > 0x8_0000 || (rem == 0x8_0000 && code & 1 == 1) {
            code += 1;
        }
        code.min(0x7E) as u8
    };
    sign | mag
}

/// E4M3 code to f32.
pub(crate) fn from_e4m3(c: u8) -> f32 {
    let sign = if c & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((c >> 3) & 0xF);
    let m = f32::from(c & 7);
    sign * if e == 0 {
        m * 2f32.powi(-9)
    } else {
        (1.0 + m / 8.0) * 2f32.powi(e - 7)
    }
}

fn cache_index(p: &Params, layer: usize, kvb: usize, pos: usize) -> usize {
    // kvb indexes (k_or_v, batch, head) flattened; the cache is [layers, 2, batch, heads, max_seq, d].
    ((layer * 2 * p.batch * p.heads + kvb) * p.max_seq + pos) * p.head_dim
}

/// A cache after a run: bf16 values, or E4M3 codes with per-(layer, position) scales.
pub(crate) enum Cache {
    /// `[layers, 2, batch, heads, max_seq, head_dim]` bf16 bits.
    Bf16(Vec<u16>),
    /// Codes of the same shape and scales `[layers, max_seq]`.
    Fp8(Vec<u8>, Vec<f32>),
}

/// Baseline: allocate the bf16 cache and append every token.
pub(crate) fn append_bf16(inp: &Inputs) -> Cache {
    let p = inp.p;
    let d = p.head_dim;
    let mut cache = vec![0u16; p.cache_elems()];
    for (tok, src) in inp.kv.chunks(p.token_elems()).enumerate() {
        let (pos, layer) = (tok / p.active_layers, tok % p.active_layers);
        for (kvb, row) in src.chunks(d).enumerate() {
            let o = cache_index(&p, layer, kvb, pos);
            for (dst, x) in cache[o..o + d].iter_mut().zip(row) {
                *dst = to_bf16(*x);
            }
        }
    }
    Cache::Bf16(cache)
}

/// Optimized: allocate the E4M3 cache and scales, quantize each token once and append it.
pub(crate) fn append_fp8(inp: &Inputs) -> Cache {
    let p = inp.p;
    let d = p.head_dim;
    let mut codes = vec![0u8; p.cache_elems()];
    let mut scales = vec![0.0f32; p.layers * p.max_seq];
    for (tok, src) in inp.kv.chunks(p.token_elems()).enumerate() {
        let (pos, layer) = (tok / p.active_layers, tok % p.active_layers);
        let absmax = src.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let scale = if absmax > 0.0 { absmax / E4M3_MAX } else { 1.0 };
        let inv = 1.0 / scale;
        scales[layer * p.max_seq + pos] = scale;
        for (kvb, row) in src.chunks(d).enumerate() {
            let o = cache_index(&p, layer, kvb, pos);
            for (dst, x) in codes[o..o + d].iter_mut().zip(row) {
                *dst = to_e4m3(x * inv);
            }
        }
    }
    Cache::Fp8(codes, scales)
}

/// Dequantize every written token, in input order.
pub(crate) fn read_back(p: &Params, cache: &Cache) -> Vec<f32> {
    let d = p.head_dim;
    let mut out = Vec::with_capacity(p.steps * p.active_layers * p.token_elems());
    for tok in 0..p.steps * p.active_layers {
        let (pos, layer) = (tok / p.active_layers, tok % p.active_layers);
        for kvb in 0..2 * p.batch * p.heads {
            let o = cache_index(p, layer, kvb, pos);
            match cache {
                Cache::Bf16(c) => out.extend(c[o..o + d].iter().map(|h| from_bf16(*h))),
                Cache::Fp8(c, s) => {
                    let scale = s[layer * p.max_seq + pos];
                    out.extend(c[o..o + d].iter().map(|q| from_e4m3(*q) * scale));
                }
            }
        }
    }
    out
}

struct KvRun {
    inp: Arc<Inputs>,
    fp8: bool,
}

impl KvRun {
    fn append(&self) -> Cache {
        if self.fp8 {
            append_fp8(&self.inp)
        } else {
            append_bf16(&self.inp)
        }
    }
}

impl VariantRun for KvRun {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        let cache = self.append();
        std::hint::black_box(&cache);
        Ok(None)
    }

    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        Ok(read_back(&self.inp.p, &self.append()))
    }
}

/// Upper estimate, in bytes, of what the CPU workload allocates for `p` (inputs, every
/// variant's output and scratch, the reference), in floating point so no shape overflows it.
pub(crate) fn footprint(p: &Params) -> f64 {
    let token = 2.0 * dim(p.batch) * dim(p.heads) * dim(p.head_dim);
    let cache = dim(p.layers) * dim(p.max_seq) * token;
    cache * 3.0
        + dim(p.layers) * dim(p.max_seq) * 4.0
        + dim(p.steps) * dim(p.active_layers) * token * 16.0
}

/// The CPU workload.
pub(crate) fn workload(shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
    workload_with(Arc::new(inputs(Params::from_shapes(shapes)?, seed)), seed)
}

/// The CPU workload over inputs already generated (the CUDA backend takes its work, input
/// signature and reference from here, so both backends describe the same problem).
pub(crate) fn workload_with(inp: Arc<Inputs>, seed: u64) -> Result<Workload, BackendError> {
    let p = inp.p;
    let sig = signature(
        seed,
        vec![tensor(
            "kv",
            "f32",
            &[p.steps, p.active_layers, 2, p.batch, p.heads, p.head_dim],
        )],
    );
    let n = inp.kv.len() as f64;
    let r = Arc::clone(&inp);
    let mk = |name: &str, fp8: bool, sig| Variant {
        name: name.into(),
        signature: sig,
        runner: Box::new(KvRun {
            inp: Arc::clone(&inp),
            fp8,
        }),
    };
    Ok(Workload {
        variants: vec![
            mk("baseline", false, sig.clone()),
            mk("optimized_fp8_e4m3_scaled", true, sig),
        ],
        work: Work {
            flops: None,
            bytes: Some((n * (4.0 + 2.0)).into()),
        },
        baseline_file: FILE.into(),
        reference: Some(Box::new(move || {
            r.kv.iter().map(|x| f64::from(*x)).collect()
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_round_trips_every_finite_code() {
        for c in 0u8..=255 {
            if c & 0x7F == 0x7F {
                continue;
            }
            let x = from_e4m3(c);
            let back = to_e4m3(x);
            assert!(
                back == c || (x == 0.0 && back & 0x7F == 0),
                "{c:#x} {x} {back:#x}"
            );
        }
        assert_eq!(from_e4m3(0x7E), 448.0);
        assert_eq!(to_e4m3(1000.0), 0x7E);
        assert_eq!(to_e4m3(1.0 + 1.0 / 16.0), to_e4m3(1.0)); // tie to even
        assert_eq!(from_bf16(to_bf16(1.5)), 1.5);
    }
}
