//! Why the CUDA backend cannot run or a kernel cannot be built ([`CudaError`], with its exit
//! code), and the guard that turns a panic inside a CUDA library call into one.

/// Why the CUDA backend cannot run or a kernel cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CudaError {
    /// The CUDA driver library (libcuda.so.1) cannot be loaded.
    #[error(
        "CUDA driver library not found (libcuda.so.1): install the NVIDIA driver or run on a GPU runner"
    )]
    NoDriver,
    /// NVRTC (libnvrtc.so.12) cannot be loaded.
    #[error(
        "NVRTC library not found (expected libnvrtc.so.12 on the loader path): `source .ci/nvrtc.sh` or install nvidia-cuda-nvrtc-cu12"
    )]
    NoNvrtc,
    /// The driver loaded but failed (no device, bad ordinal, unsupported PTX, ...).
    #[error("CUDA driver call {call} failed: {message}")]
    Driver {
        /// What was called.
        call: String,
        /// The driver's error.
        message: String,
    },
    /// A call into a CUDA library panicked (a missing symbol in an old driver, for example).
    #[error("CUDA call {call} panicked: {message}")]
    Panicked {
        /// What was called.
        call: String,
        /// The panic payload.
        message: String,
    },
    /// NVRTC rejected a kernel file or reported warnings (any log output fails the build).
    #[error("NVRTC compile of kernels/{file} for {arch} failed ({status}); log:\n{log}")]
    Compile {
        /// Kernel file name under `kernels/`.
        file: String,
        /// `--gpu-architecture` value.
        arch: String,
        /// NVRTC status, or `warnings` when compilation succeeded with a non-empty log.
        status: String,
        /// NVRTC's log.
        log: String,
    },
    /// The device cannot run a kernel (compute capability too low).
    #[error(
        "device {device} has compute capability {found}; kernels/{file} needs at least {expected}"
    )]
    Capability {
        /// Device name.
        device: String,
        /// Kernel file.
        file: String,
        /// Required `major.minor`.
        expected: String,
        /// Found `major.minor`.
        found: String,
    },
}

impl crate::exit::Classify for CudaError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            CudaError::Compile { .. } => crate::exit::Exit::Invalid,
            _ => crate::exit::Exit::Io,
        }
    }
}

/// Run `f`, turning a panic inside a CUDA library call into [`CudaError::Panicked`]
/// (cudarc panics when a library or symbol is missing; `panic = "unwind"` is kept for this).
pub(crate) fn guarded<T>(
    call: &str,
    f: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".into());
        Err(CudaError::Panicked {
            call: call.into(),
            message,
        })
    })
}
