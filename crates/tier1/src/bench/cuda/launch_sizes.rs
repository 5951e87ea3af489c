//! The static shared memory and tile sizes the launch plans give the kernels (the sizes the
//! `__shared__` arrays of `kernels/*.cu` declare).

/// Static shared memory of `t1_gemm_nt_tile` (`as`, `bs`: 16 × 68 f32 each).
pub(crate) const GEMM_TILE_SHARED: u32 = 2 * 16 * 68 * 4;
/// Static shared memory of `block_scaling_fused_mma` (two 128 × 40 bf16 tiles).
pub(crate) const FUSED_MMA_SHARED: u32 = 2 * 128 * 40 * 2;
/// One `t1_block_sum` or `t1_block_max` (32 f32 partials).
pub(crate) const BLOCK_REDUCE_SHARED: u32 = 32 * 4;
/// Fused mma tile sizes (the host pads M, N to 128 and K to 32).
pub(crate) const MMA_TILE: (usize, usize, usize) = (128, 128, 32);

/// Static shared memory of `t1_flash_causal<split>` (K and V tiles of 32 × 64·split f32).
pub(crate) const fn flash_shared(split: u32) -> u32 {
    2 * 32 * 64 * split * 4
}
