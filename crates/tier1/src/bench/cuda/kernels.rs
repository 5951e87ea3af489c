//! The CUDA kernel sources (`kernels/*.cu`, embedded at build time), the target each belongs to,
//! the launch registry: which `extern "C" __global__` entries each target's launchers use, and the
//! static shared memory and tile sizes the launch plans give those kernels.

/// Device helpers prepended to every kernel file before NVRTC sees it (NVRTC has no headers).
pub const COMMON: &str = include_str!("../../../../../kernels/common.cuh");

/// One kernel file and the suite target it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// File name under `kernels/`.
    pub file: &'static str,
    /// Suite target key (`configs/benchmark_suites/tier1.yaml`).
    pub target_key: &'static str,
    /// Minimum compute capability (major, minor) the file needs.
    pub min_capability: (u32, u32),
    /// The file's text.
    pub source: &'static str,
}

impl KernelSource {
    /// The translation unit NVRTC compiles: `common.cuh`, then a `#line` reset, then the file.
    pub fn full_source(&self) -> String {
        format!("{COMMON}\n#line 1 \"{}\"\n{}", self.file, self.source)
    }
}

/// Every kernel file, one per target.
pub const KERNELS: [KernelSource; 6] = [
    KernelSource {
        file: "block_scaling.cu",
        target_key: "block_scaling",
        // mma.sync m16n8k16 with bf16 operands needs sm_80.
        min_capability: (8, 0),
        source: include_str!("../../../../../kernels/block_scaling.cu"),
    },
    KernelSource {
        file: "attention_alibi.cu",
        target_key: "flashattention4_alibi",
        min_capability: (7, 0),
        source: include_str!("../../../../../kernels/attention_alibi.cu"),
    },
    KernelSource {
        file: "persistent_decode.cu",
        target_key: "persistent_decode",
        min_capability: (7, 0),
        source: include_str!("../../../../../kernels/persistent_decode.cu"),
    },
    KernelSource {
        file: "kv_cache.cu",
        target_key: "kv_standard",
        min_capability: (7, 0),
        source: include_str!("../../../../../kernels/kv_cache.cu"),
    },
    KernelSource {
        file: "gradient_fusion.cu",
        target_key: "gradient_fusion",
        min_capability: (7, 0),
        source: include_str!("../../../../../kernels/gradient_fusion.cu"),
    },
    KernelSource {
        file: "llama.cu",
        target_key: "llama_3_1_8b",
        min_capability: (7, 0),
        source: include_str!("../../../../../kernels/llama.cu"),
    },
];

/// The entries each target's launchers call, per variant: `(target key, baseline entries,
/// optimized entries)`. The launchers look kernels up by these names only, so a kernel missing
/// here is dead code (the registry test refuses it) and a name here without a kernel fails the
/// module load.
pub const LAUNCHES: [(&str, &[&str], &[&str]); 6] = [
    (
        "block_scaling",
        &["block_scaling_dequant_bf16", "block_scaling_gemm_bf16"],
        &["block_scaling_fused_mma"],
    ),
    (
        "flashattention4_alibi",
        &["alibi_scores", "alibi_softmax", "alibi_pv"],
        &["alibi_flash"],
    ),
    (
        "persistent_decode",
        // The CUDA-graph variant replays the same three baseline launches.
        &["decode_mul", "decode_sum", "decode_scale"],
        &["decode_persistent"],
    ),
    ("kv_standard", &["kv_append_bf16"], &["kv_append_fp8"]),
    (
        "gradient_fusion",
        &["grad_reduce_tensor"],
        &["grad_reduce_bucket"],
    ),
    (
        "llama_3_1_8b",
        &[
            "llama_rmsnorm",
            "llama_rope",
            "llama_matmul_naive",
            "llama_attn_scores_masked",
            "llama_softmax_rows",
            "llama_attn_pv",
            "llama_add",
            "llama_silu",
            "llama_mul",
        ],
        &[
            "llama_rmsnorm",
            "llama_rope",
            "llama_matmul_tiled",
            "llama_attn_flash",
            "llama_swiglu",
        ],
    ),
];

/// Static shared memory of `t1_gemm_nt_tile` (`as`, `bs`: 16 × 68 f32 each).
pub const GEMM_TILE_SHARED: u32 = 2 * 16 * 68 * 4;
/// Static shared memory of `block_scaling_fused_mma` (two 128 × 40 bf16 tiles).
pub const FUSED_MMA_SHARED: u32 = 2 * 128 * 40 * 2;
/// One `t1_block_sum` or `t1_block_max` (32 f32 partials).
pub const BLOCK_REDUCE_SHARED: u32 = 32 * 4;
/// Fused mma tile sizes (the host pads M, N to 128 and K to 32).
pub const MMA_TILE: (usize, usize, usize) = (128, 128, 32);

/// Static shared memory of `t1_flash_causal<split>` (K and V tiles of 32 × 64·split f32).
pub const fn flash_shared(split: u32) -> u32 {
    2 * 32 * 64 * split * 4
}

/// The `extern "C" __global__` entry names declared in `source`, in order of appearance.
/// Understands attributes between `__global__` and the return type
/// (`__launch_bounds__(...)`) and declarations spread over several lines.
pub fn entry_points(source: &str) -> Vec<String> {
    const MARK: &str = "extern \"C\" __global__";
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let Some(paren) = find_param_list(rest) else {
            break;
        };
        let head = rest[..paren].trim_end();
        let name: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
        rest = &rest[paren..];
    }
    names
}

/// Kind of one kernel parameter, as the launch plans pass it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Any pointer (`const float* __restrict__`, `u8*`, ...): a device address.
    Ptr,
    /// `int`.
    I32,
    /// `long long`.
    I64,
    /// `float`.
    F32,
}

/// The parameter kinds of entry `entry` declared in `source` (`None` when the entry is absent or
/// a parameter has a type the launch plans cannot pass).
pub fn kernel_params(source: &str, entry: &str) -> Option<Vec<ParamKind>> {
    const MARK: &str = "extern \"C\" __global__";
    let mut rest = source;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let open = find_param_list(rest)?;
        let head = rest[..open].trim_end();
        let close = open + rest[open..].find(')')?;
        if head.ends_with(entry)
            && !head[..head.len() - entry.len()]
                .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            let list = rest[open + 1..close].trim();
            if list.is_empty() {
                return Some(Vec::new());
            }
            return list.split(',').map(param_kind).collect();
        }
        rest = &rest[close..];
    }
    None
}

fn param_kind(decl: &str) -> Option<ParamKind> {
    if decl.contains('*') {
        return Some(ParamKind::Ptr);
    }
    let words: Vec<&str> = decl
        .split_whitespace()
        .filter(|w| *w != "const" && *w != "unsigned")
        .collect();
    match words.as_slice() {
        ["int", _] => Some(ParamKind::I32),
        ["long", "long", _] => Some(ParamKind::I64),
        ["float", _] => Some(ParamKind::F32),
        _ => None,
    }
}

/// Byte offset of the `(` opening the parameter list: the first `(` not belonging to a
/// `__launch_bounds__(...)` or `__align__(...)` attribute.
fn find_param_list(s: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let open = from + s[from..].find('(')?;
        let before = s[..open].trim_end();
        if before.ends_with("__launch_bounds__") || before.ends_with("__align__") {
            let close = open + s[open..].find(')')?;
            from = close + 1;
        } else {
            return Some(open);
        }
    }
}

/// Launch-registry entries of `target_key` (baseline then optimized, deduplicated).
pub fn launched_entries(target_key: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (key, base, opt) in LAUNCHES {
        if key == target_key {
            for name in base.iter().chain(opt.iter()) {
                if !out.contains(name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_handles_attributes_and_line_breaks() {
        let src = "extern \"C\" __global__ void a(int x) {}\n\
                   extern \"C\" __global__ void __launch_bounds__(256)\n    b_2(float* y) {}\n\
                   __device__ void not_an_entry(int) {}\n";
        assert_eq!(entry_points(src), vec!["a".to_string(), "b_2".to_string()]);
    }

    #[test]
    fn every_kernel_file_has_entries_and_no_include() {
        let includes = |s: &str| s.lines().any(|l| l.trim_start().starts_with("#include"));
        for k in KERNELS {
            assert!(
                !entry_points(k.source).is_empty(),
                "{} has no entry",
                k.file
            );
            assert!(!includes(k.source), "{} includes a header", k.file);
        }
        assert!(!includes(COMMON), "common.cuh includes a header");
    }

    #[test]
    fn kernel_params_reads_kinds_in_order() {
        let src = "extern \"C\" __global__ void __launch_bounds__(256)\n  k2(const u8* __restrict__ a, \n\
                   float* c, int m, long long off, float s) {}\n\
                   extern \"C\" __global__ void k(u16 x) {}\n";
        use ParamKind::*;
        assert_eq!(
            kernel_params(src, "k2"),
            Some(vec![Ptr, Ptr, I32, I64, F32])
        );
        assert_eq!(
            kernel_params(src, "k"),
            None,
            "u16 by value is not passable"
        );
        assert_eq!(
            kernel_params(src, "2"),
            None,
            "a suffix of a name is not the name"
        );
        assert_eq!(kernel_params(src, "absent"), None);
    }

    #[test]
    fn launched_entries_deduplicates_shared_kernels() {
        let llama = launched_entries("llama_3_1_8b");
        assert_eq!(llama.iter().filter(|n| **n == "llama_rmsnorm").count(), 1);
        assert!(launched_entries("no_such_target").is_empty());
    }
}
