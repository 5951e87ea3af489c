//! The six targets' device plans: which kernels each variant launches, with which grid, block,
//! shared memory and arguments, over which buffers (layouts as documented in `kernels/*.cu`).

use super::kernels::{
    BLOCK_REDUCE_SHARED, FUSED_MMA_SHARED, GEMM_TILE_SHARED, MMA_TILE, flash_shared,
};
use super::plan::{
    Arg, BufSpec, Output, Owner, Plan, Step, VariantPlan, blocks, blocks_capped, buf, buf_at, int,
    launch, launch3,
};
use crate::bench::backend::{BackendError, Shapes};
use crate::bench::targets::{
    block_scaling, flashattention4_alibi as alibi, gradient_fusion, kv_standard, llama_3_1_8b,
    persistent_decode,
};

fn input(name: &'static str, bytes: usize) -> BufSpec {
    BufSpec {
        name,
        bytes: bytes as u64,
        owner: Owner::Input,
    }
}

fn owned(name: &'static str, bytes: usize, variant: usize) -> BufSpec {
    BufSpec {
        name,
        bytes: bytes as u64,
        owner: Owner::Variant(variant),
    }
}

fn variant(name: &str, steps: Vec<Step>, output: Output) -> VariantPlan {
    VariantPlan {
        name: name.into(),
        steps,
        graph: false,
        output,
    }
}

fn f32_out(buf: &'static str, rows: usize, cols: usize) -> Output {
    Output::F32 {
        buf,
        rows,
        cols,
        ld: cols,
    }
}

fn shape_err(key: &str, param: &str, message: String) -> BackendError {
    BackendError::Shape {
        key: key.into(),
        param: param.into(),
        message,
    }
}

/// The plan of built-in target `key` at `shapes`.
pub fn plan(key: &str, shapes: &Shapes) -> Result<Plan, BackendError> {
    match key {
        "block_scaling" => Ok(block_scaling_plan(block_scaling::Params::from_shapes(
            shapes,
        )?)?),
        "flashattention4_alibi" => alibi_plan(alibi::Params::from_shapes(shapes)?),
        "persistent_decode" => decode_plan(persistent_decode::Params::from_shapes(shapes)?),
        "kv_standard" => kv_plan(kv_standard::Params::from_shapes(shapes)?),
        "gradient_fusion" => gradient_plan(gradient_fusion::Params::from_shapes(shapes)?),
        "llama_3_1_8b" => llama_plan(llama_3_1_8b::Params::from_shapes(shapes)?),
        _ => Err(BackendError::Unsupported {
            backend: "cuda".into(),
            key: key.into(),
        }),
    }
}

/// Padded sizes of the block-scaled operands: M and N to 128, K to 32 (zero codes add nothing).
pub fn block_scaling_padded(p: block_scaling::Params) -> (usize, usize, usize) {
    (
        p.m.next_multiple_of(MMA_TILE.0),
        p.n.next_multiple_of(MMA_TILE.1),
        p.k.next_multiple_of(MMA_TILE.2),
    )
}

fn block_scaling_plan(p: block_scaling::Params) -> Result<Plan, BackendError> {
    let key = "block_scaling";
    let (mp, np, kp) = block_scaling_padded(p);
    let (m, n, k) = (int(key, "m", mp)?, int(key, "n", np)?, int(key, "k", kp)?);
    let (m0, n0) = (p.m as i32, p.n as i32);
    let dequant = |codes, scales, out, rows: usize| {
        launch(
            "block_scaling_dequant_bf16",
            blocks_capped(rows * kp / 2, 256, 65536),
            256,
            0,
            vec![
                buf(codes),
                buf(scales),
                buf(out),
                Arg::I32(rows as i32),
                Arg::I32(k),
            ],
        )
    };
    let baseline = vec![
        dequant("a", "sfa", "a_bf16", p.m),
        dequant("b", "sfb", "b_bf16", p.n),
        launch3(
            "block_scaling_gemm_bf16",
            (blocks(p.n, 64), blocks(p.m, 64), 1),
            (256, 1, 1),
            GEMM_TILE_SHARED,
            vec![
                buf("a_bf16"),
                buf("b_bf16"),
                buf("c_base"),
                Arg::I32(m0),
                Arg::I32(n0),
                Arg::I32(k),
            ],
        ),
    ];
    let fused = vec![launch3(
        "block_scaling_fused_mma",
        ((np / MMA_TILE.1) as u32, (mp / MMA_TILE.0) as u32, 1),
        (256, 1, 1),
        FUSED_MMA_SHARED,
        vec![
            buf("a"),
            buf("sfa"),
            buf("b"),
            buf("sfb"),
            buf("c_fused"),
            Arg::I32(m),
            Arg::I32(n),
            Arg::I32(k),
        ],
    )];
    Ok(Plan {
        key: "block_scaling",
        buffers: vec![
            input("a", mp * kp / 2),
            input("sfa", mp * kp / 16),
            input("b", np * kp / 2),
            input("sfb", np * kp / 16),
            owned("a_bf16", p.m * kp * 2, 0),
            owned("b_bf16", p.n * kp * 2, 0),
            owned("c_base", p.m * p.n * 4, 0),
            owned("c_fused", mp * np * 4, 1),
        ],
        variants: vec![
            variant("baseline", baseline, f32_out("c_base", p.m, p.n)),
            variant(
                "optimized_fused_dequant_mma",
                fused,
                Output::F32 {
                    buf: "c_fused",
                    rows: p.m,
                    cols: p.n,
                    ld: np,
                },
            ),
        ],
    })
}

fn alibi_plan(p: alibi::Params) -> Result<Plan, BackendError> {
    let key = "flashattention4_alibi";
    if p.head_dim > 64 {
        return Err(shape_err(
            key,
            "head_dim",
            format!("alibi_flash supports at most 64, found {}", p.head_dim),
        ));
    }
    let bh = p.batch * p.heads;
    if bh > 65535 {
        return Err(shape_err(
            key,
            "heads",
            format!("batch × heads at most 65535, found {bh}"),
        ));
    }
    let (heads, seq, d) = (
        int(key, "heads", p.heads)?,
        int(key, "seq", p.seq)?,
        p.head_dim as i32,
    );
    let scale = Arg::F32(1.0 / (p.head_dim as f32).sqrt());
    let n = bh * p.seq * p.head_dim;
    let baseline = vec![
        launch3(
            "alibi_scores",
            (blocks(p.seq, 16), blocks(p.seq, 16), bh as u32),
            (16, 16, 1),
            0,
            vec![
                buf("q"),
                buf("k"),
                buf("scores"),
                Arg::I32(heads),
                Arg::I32(seq),
                Arg::I32(d),
                scale,
            ],
        ),
        launch(
            "alibi_softmax",
            blocks(bh * p.seq, 1),
            256,
            2 * BLOCK_REDUCE_SHARED,
            vec![buf("scores"), Arg::I32(seq)],
        ),
        launch3(
            "alibi_pv",
            (blocks(p.seq * p.head_dim, 256), bh as u32, 1),
            (256, 1, 1),
            0,
            vec![
                buf("scores"),
                buf("v"),
                buf("o_base"),
                Arg::I32(seq),
                Arg::I32(d),
            ],
        ),
    ];
    let flash = vec![launch3(
        "alibi_flash",
        (blocks(p.seq, 64), bh as u32, 1),
        (64, 1, 1),
        flash_shared(1),
        vec![
            buf("q"),
            buf("k"),
            buf("v"),
            buf("o_flash"),
            Arg::I32(heads),
            Arg::I32(seq),
            Arg::I32(d),
            scale,
        ],
    )];
    Ok(Plan {
        key: "flashattention4_alibi",
        buffers: vec![
            input("q", n * 4),
            input("k", n * 4),
            input("v", n * 4),
            owned("scores", bh * p.seq * p.seq * 4, 0),
            owned("o_base", n * 4, 0),
            owned("o_flash", n * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                baseline,
                f32_out("o_base", n / p.head_dim, p.head_dim),
            ),
            variant(
                "optimized_flash_online_softmax",
                flash,
                f32_out("o_flash", n / p.head_dim, p.head_dim),
            ),
        ],
    })
}

/// Threads per row-reduction block: `d` rounded up to a warp, between 32 and 256.
fn row_block(d: usize) -> u32 {
    d.next_multiple_of(32).clamp(32, 256) as u32
}

fn decode_plan(p: persistent_decode::Params) -> Result<Plan, BackendError> {
    let key = "persistent_decode";
    let row = p.batch * p.head_dim;
    let (rows, d) = (int(key, "batch", row)?, int(key, "head_dim", p.head_dim)?);
    let per_step = |tmp, sums, out| {
        let mut steps = Vec::with_capacity(3 * p.steps);
        for t in 0..p.steps {
            let off = t * row * 4;
            steps.push(launch(
                "decode_mul",
                blocks(row, 256),
                256,
                0,
                vec![buf_at("q", off), buf_at("k", off), buf(tmp), Arg::I32(rows)],
            ));
            steps.push(launch(
                "decode_sum",
                p.batch as u32,
                row_block(p.head_dim),
                BLOCK_REDUCE_SHARED,
                vec![buf(tmp), buf(sums), Arg::I32(d)],
            ));
            steps.push(launch(
                "decode_scale",
                blocks(row, 256),
                256,
                0,
                vec![
                    buf_at("v", off),
                    buf(sums),
                    buf_at(out, off),
                    Arg::I32(rows),
                    Arg::I32(d),
                ],
            ));
        }
        steps
    };
    let n = p.steps * row;
    let persistent = vec![launch(
        "decode_persistent",
        p.batch as u32,
        row_block(p.head_dim),
        BLOCK_REDUCE_SHARED,
        vec![
            buf("q"),
            buf("k"),
            buf("v"),
            buf("out_persistent"),
            Arg::I32(int(key, "steps", p.steps)?),
            Arg::I32(int(key, "batch", p.batch)?),
            Arg::I32(d),
        ],
    )];
    let mut graph = variant(
        "optimized_graph",
        per_step("tmp_graph", "sums_graph", "out_graph"),
        f32_out("out_graph", n / p.head_dim, p.head_dim),
    );
    graph.graph = true;
    Ok(Plan {
        key: "persistent_decode",
        buffers: vec![
            input("q", n * 4),
            input("k", n * 4),
            input("v", n * 4),
            owned("tmp", row * 4, 0),
            owned("sums", p.batch * 4, 0),
            owned("out", n * 4, 0),
            owned("tmp_graph", row * 4, 1),
            owned("sums_graph", p.batch * 4, 1),
            owned("out_graph", n * 4, 1),
            owned("out_persistent", n * 4, 2),
        ],
        variants: vec![
            variant(
                "baseline",
                per_step("tmp", "sums", "out"),
                f32_out("out", n / p.head_dim, p.head_dim),
            ),
            graph,
            variant(
                "optimized_persistent_kernel",
                persistent,
                f32_out("out_persistent", n / p.head_dim, p.head_dim),
            ),
        ],
    })
}

fn kv_plan(p: kv_standard::Params) -> Result<Plan, BackendError> {
    let key = "kv_standard";
    let te = p.token_elems();
    let step_elems = p.active_layers * te;
    let dims = [
        int(key, "active_layers", p.active_layers)?,
        int(key, "batch", p.batch)?,
        int(key, "layers", p.layers)?,
        int(key, "heads", p.heads)?,
        int(key, "max_seq", p.max_seq)?,
        int(key, "head_dim", p.head_dim)?,
    ];
    let [al, batch, layers, heads, max_seq, d] = dims.map(Arg::I32);
    let mut bf16 = Vec::with_capacity(p.steps);
    let mut fp8 = Vec::with_capacity(p.steps);
    for pos in 0..p.steps {
        let (src, pos_arg) = (buf_at("src", pos * step_elems * 4), Arg::I32(pos as i32));
        bf16.push(launch(
            "kv_append_bf16",
            blocks_capped(step_elems, 256, 65536),
            256,
            0,
            vec![
                src,
                buf("cache_bf16"),
                pos_arg,
                al,
                batch,
                layers,
                heads,
                max_seq,
                d,
            ],
        ));
        fp8.push(launch(
            "kv_append_fp8",
            p.active_layers as u32,
            1024,
            BLOCK_REDUCE_SHARED,
            vec![
                src,
                buf("cache_fp8"),
                buf("scales"),
                pos_arg,
                batch,
                layers,
                heads,
                max_seq,
                d,
            ],
        ));
    }
    Ok(Plan {
        key: "kv_standard",
        buffers: vec![
            input("src", p.steps * step_elems * 4),
            owned("cache_bf16", p.cache_elems() * 2, 0),
            owned("cache_fp8", p.cache_elems(), 1),
            owned("scales", p.layers * p.max_seq * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                bf16,
                Output::Kv {
                    cache: "cache_bf16",
                    scales: None,
                    p,
                },
            ),
            variant(
                "optimized_fp8_e4m3_scaled",
                fp8,
                Output::Kv {
                    cache: "cache_fp8",
                    scales: Some("scales"),
                    p,
                },
            ),
        ],
    })
}

fn gradient_plan(p: gradient_fusion::Params) -> Result<Plan, BackendError> {
    let key = "gradient_fusion";
    let n = p.tensors * p.tensor_elems;
    let (len, ranks) = (
        int(key, "tensor_elems", p.tensor_elems)?,
        int(key, "ranks", p.ranks)?,
    );
    let stride = Arg::I64(n as i64);
    let mut per_tensor = vec![Step::Zero("out_tensor")];
    let mut bucketed = vec![Step::Zero("out_bucket")];
    for _ in 0..p.repeats {
        for t in 0..p.tensors {
            per_tensor.push(launch(
                "grad_reduce_tensor",
                blocks_capped(p.tensor_elems, 256, 4096),
                256,
                0,
                vec![
                    buf("grads"),
                    buf("out_tensor"),
                    Arg::I64((t * p.tensor_elems) as i64),
                    Arg::I32(len),
                    Arg::I32(ranks),
                    stride,
                ],
            ));
        }
        for b0 in (0..n).step_by(p.bucket_elems.max(1)) {
            let blen = p.bucket_elems.min(n - b0);
            bucketed.push(launch(
                "grad_reduce_bucket",
                blocks_capped(blen.div_ceil(4), 256, 4096),
                256,
                0,
                vec![
                    buf("grads"),
                    buf("out_bucket"),
                    Arg::I64(b0 as i64),
                    Arg::I64(blen as i64),
                    Arg::I32(ranks),
                    stride,
                ],
            ));
        }
    }
    Ok(Plan {
        key: "gradient_fusion",
        buffers: vec![
            input("grads", p.ranks * n * 4),
            owned("out_tensor", n * 4, 0),
            owned("out_bucket", n * 4, 1),
        ],
        variants: vec![
            variant(
                "baseline",
                per_tensor,
                f32_out("out_tensor", p.tensors, p.tensor_elems),
            ),
            variant(
                "optimized_bucketed",
                bucketed,
                f32_out("out_bucket", p.tensors, p.tensor_elems),
            ),
        ],
    })
}

pub use super::plans_llama::llama_plan;

#[cfg(test)]
#[path = "plans_tests.rs"]
mod tests;
