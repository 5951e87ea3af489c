//! Host side of the CUDA workloads: the input buffers' contents (each target's plan file,
//! `cuda/plans/<key>.rs`, fills them from the CPU twin's seeded generator in the kernels' layout)
//! and the decoding of outputs read back into the CPU twins' order (so both backends verify
//! against the same reference).

use crate::bench::targets::kv_standard;

/// The contents of one input buffer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HostData {
    /// f32 values.
    F32(Vec<f32>),
    /// Raw bytes (packed codes, scales).
    U8(Vec<u8>),
}

impl HostData {
    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            HostData::F32(v) => v.len() * 4,
            HostData::U8(v) => v.len(),
        }
    }
}

/// Named input buffers.
pub(crate) type Inputs = Vec<(&'static str, HostData)>;

/// Byte ranges `(offset, len)` of the written tokens of a kernel-layout cache
/// `[batch, layers, 2, heads, max_seq, d]` with `elem` bytes per value, in compact order
/// `[batch, active_layers, 2, heads, steps, d]`.
pub(crate) fn kv_segments(p: &kv_standard::Params, elem: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(p.batch * p.active_layers * 2 * p.heads);
    for b in 0..p.batch {
        for layer in 0..p.active_layers {
            for kv in 0..2 {
                for h in 0..p.heads {
                    let row = ((b * p.layers + layer) * 2 + kv) * p.heads + h;
                    out.push((
                        row * p.max_seq * p.head_dim * elem,
                        p.steps * p.head_dim * elem,
                    ));
                }
            }
        }
    }
    out
}

/// Dequantize the compact written tokens (bf16 bits when `scales` is `None`, else E4M3 codes with
/// `scales[layer · max_seq + pos]`) into the CPU twin's order (`kv_standard::read_back`).
pub(crate) fn kv_decode(
    p: &kv_standard::Params,
    compact: &[u8],
    scales: Option<&[f32]>,
) -> Vec<f32> {
    let d = p.head_dim;
    let mut out = Vec::with_capacity(p.steps * p.active_layers * p.token_elems());
    for tok in 0..p.steps * p.active_layers {
        let (pos, layer) = (tok / p.active_layers, tok % p.active_layers);
        for kv in 0..2 {
            for b in 0..p.batch {
                for h in 0..p.heads {
                    let at = ((((b * p.active_layers + layer) * 2 + kv) * p.heads + h) * p.steps
                        + pos)
                        * d;
                    for c in at..at + d {
                        out.push(match scales {
                            None => kv_standard::from_bf16(u16::from_le_bytes([
                                compact[2 * c],
                                compact[2 * c + 1],
                            ])),
                            Some(s) => {
                                kv_standard::from_e4m3(compact[c]) * s[layer * p.max_seq + pos]
                            }
                        });
                    }
                }
            }
        }
    }
    out
}

/// Rows `rows × cols` of an f32 matrix with row stride `ld`, from little-endian bytes.
pub(crate) fn crop_f32(bytes: &[u8], rows: usize, cols: usize, ld: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row = &bytes[r * ld * 4..(r * ld + cols) * 4];
        out.extend(
            row.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    out
}
