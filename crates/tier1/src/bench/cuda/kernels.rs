//! The kernel registry over the CUDA sides the table of targets hands down (a
//! `&[CudaSide]`, one per built-in target, in suite order): each target's CUDA side by key
//! (`find`) and the compute capability every kernel file needs (`check_capability`). Nothing
//! in `cuda/` reads the table: the list comes in as an argument.

use crate::bench::backend::BackendError;
use crate::bench::cuda::error::CudaError;
use crate::bench::cuda::probe::DeviceInfo;
use crate::bench::cuda::spec::CudaSide;

pub use super::source::{KernelSource, entry_points};

/// The CUDA side of built-in target `key` in `sides`, or [`BackendError::Unsupported`] naming
/// `cuda`.
pub(crate) fn find<'a>(sides: &'a [CudaSide], key: &str) -> Result<&'a CudaSide, BackendError> {
    sides
        .iter()
        .find(|s| s.key == key)
        .ok_or_else(|| BackendError::Unsupported {
            backend: "cuda".into(),
            key: key.into(),
        })
}

/// [`CudaError::Capability`] for the first kernel file of `sides` that needs a higher compute
/// capability than `info`'s device has.
pub(crate) fn check_capability(sides: &[CudaSide], info: &DeviceInfo) -> Result<(), CudaError> {
    for k in sides.iter().map(|s| &s.kernel) {
        if info.capability < k.min_capability {
            return Err(CudaError::Capability {
                device: info.name.clone(),
                file: k.file.into(),
                expected: format!("{}.{}", k.min_capability.0, k.min_capability.1),
                found: format!("{}.{}", info.capability.0, info.capability.1),
            });
        }
    }
    Ok(())
}
