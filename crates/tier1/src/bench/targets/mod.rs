//! The six built-in tier-1 targets (one file each: `Params`, seeded `inputs`, baseline, optimized
//! and reference functions, the CPU `workload` and its memory `footprint`), how `Params` are read
//! from the shapes (`params`), the numeric helpers they share (`math`) and the glue that turns
//! their functions into variants (`variant`). Every target's inputs, baseline, optimized and
//! reference functions are public: the CUDA backend uses them as verification twins. Which key is
//! which target is the table's ([`crate::bench::table`]).

pub mod block_scaling;
pub mod flashattention4_alibi;
pub mod gemm;
pub mod gradient_fusion;
pub mod kv_standard;
pub mod llama_3_1_8b;
pub mod math;
pub mod params;
pub mod persistent_decode;
pub mod variant;

pub use crate::bench::table::{BUILTIN_KEYS, cpu_workload};
pub use math::{causal_mask, dot, dot_naive, par_rows, softmax_rows, split_ranges};
pub use variant::{fn_variant, signature, tensor};
