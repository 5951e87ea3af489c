//! The built-in targets' device plans, one file per target named after its key (which kernels
//! each variant launches, with which grid, block, shared memory and arguments, over which
//! buffers; layouts as documented in `kernels/<key>.cu`), and the helpers they share (`build`).
//! Each file's `CUDA` is the CUDA side of its target's line in the table of targets above
//! `cuda/` (`crate::bench::table::TARGETS`), which hands it down in a `CudaSide`.

pub(crate) mod block_scaling;
pub(crate) mod build;
pub(crate) mod flashattention4_alibi;
pub(crate) mod gradient_fusion;
pub(crate) mod kv_standard;
pub(crate) mod llama_3_1_8b;
pub(crate) mod persistent_decode;

#[cfg(test)]
mod tests;
