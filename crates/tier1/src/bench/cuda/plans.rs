//! The built-in targets' device plans, one file per target named after its key (which kernels
//! each variant launches, with which grid, block, shared memory and arguments, over which
//! buffers; layouts as documented in `kernels/<key>.cu`), and the helpers they share (`build`).
//! Each file's `CUDA` is the CUDA side of its line in [`crate::bench::table::TARGETS`].

pub mod block_scaling;
pub mod build;
pub mod flashattention4_alibi;
pub mod gradient_fusion;
pub mod kv_standard;
pub mod llama_3_1_8b;
pub mod persistent_decode;

#[cfg(test)]
mod tests;
