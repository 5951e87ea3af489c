//! NVRTC compilation of the embedded kernels to PTX for one `--gpu-architecture`, failing on any
//! diagnostic: NVRTC has no `-Werror`, so a non-empty log (warnings included) is an error.
#![allow(unsafe_code)] // NVRTC program handles are raw FFI objects; each unsafe block says why.

use super::source::KernelSource;
use super::spec::CudaSide;
use super::{CudaError, guarded};
use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};

/// A kernel file compiled to PTX.
#[derive(Debug, Clone)]
pub struct CompiledKernel {
    /// The source it came from.
    pub(crate) kernel: KernelSource,
    /// PTX text, ready for `CudaContext::load_module(Ptx::from_src(..))`.
    pub ptx: String,
}

/// Whether libnvrtc can be loaded (a dlopen probe; never panics).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries `libloading::Library::new` on candidate names; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// The options every kernel is compiled with.
pub(crate) fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "--fmad=true".into(),
        "--display-error-number".into(),
    ]
}

/// An NVRTC program that is destroyed when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from `create_program` and is destroyed exactly once, here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn c_text(bytes: &[std::ffi::c_char]) -> String {
    // The buffers NVRTC fills are NUL-terminated; fall back to the whole buffer if not.
    let raw: Vec<u8> = bytes.iter().map(|b| *b as u8).collect();
    match CStr::from_bytes_until_nul(&raw) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&raw).into_owned(),
    }
}

/// Compile one kernel file for `arch` (for example `sm_90`, `sm_100a`).
pub fn compile_kernel(kernel: &KernelSource, arch: &str) -> Result<CompiledKernel, CudaError> {
    if !nvrtc_present() {
        return Err(CudaError::NoNvrtc);
    }
    let failed = |status: String, log: String| CudaError::Compile {
        file: kernel.file.into(),
        arch: arch.into(),
        status,
        log,
    };
    let src = CString::new(kernel.full_source())
        .map_err(|_| failed("source holds a NUL byte".into(), String::new()))?;
    let name = CString::new(kernel.file)
        .map_err(|_| failed("file name holds a NUL byte".into(), String::new()))?;
    guarded("nvrtcCompileProgram", || {
        let prog = Program(
            result::create_program(&src, Some(&name))
                .map_err(|e| failed(format!("create: {e:?}"), String::new()))?,
        );
        // SAFETY: `prog` is a live program; `src` and `name` outlive it (dropped after `prog`).
        let status = unsafe { result::compile_program(prog.0, &options(arch)) };
        // SAFETY: as above; the log exists after compilation whatever its outcome.
        let log = unsafe { result::get_program_log(prog.0) }
            .map(|l| c_text(&l))
            .unwrap_or_default();
        let log = log.trim().to_string();
        if let Err(e) = status {
            return Err(failed(format!("{e:?}"), log));
        }
        if !log.is_empty() {
            return Err(failed("warnings".into(), log));
        }
        // SAFETY: compiled successfully, so the PTX is available.
        let ptx = unsafe { result::get_ptx(prog.0) }
            .map_err(|e| failed(format!("get PTX: {e:?}"), String::new()))?;
        Ok(CompiledKernel {
            kernel: *kernel,
            ptx: c_text(&ptx),
        })
    })
}

/// Compile the kernel file of every target in `sides` for `arch`, in order; the first failure is
/// returned.
pub(crate) fn compile_all(
    sides: &[CudaSide],
    arch: &str,
) -> Result<Vec<CompiledKernel>, CudaError> {
    sides
        .iter()
        .map(|s| compile_kernel(&s.kernel, arch))
        .collect()
}
