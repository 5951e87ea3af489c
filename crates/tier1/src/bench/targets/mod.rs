//! The built-in tier-1 targets (one file each: `Params`, seeded `inputs`, baseline, optimized
//! and reference functions, the CPU `workload` and its memory `footprint`), how `Params` are read
//! from the shapes (`params`), the numeric helpers they share (`math`) and the glue that turns
//! their functions into variants (`variant`). Every target's inputs, baseline, optimized and
//! reference functions are public: the CUDA backend uses them as verification twins. Which key is
//! which target is the table's (`crate::bench::table`, above this module).

pub(crate) mod block_scaling;
pub(crate) mod flashattention4_alibi;
pub mod gemm;
pub(crate) mod gradient_fusion;
pub(crate) mod kv_standard;
pub(crate) mod llama_3_1_8b;
pub(crate) mod math;
pub(crate) mod params;
pub(crate) mod persistent_decode;
pub(crate) mod variant;
