//! The run-time probe of the CUDA driver: is it loadable, which device, which compute capability
//! (hence which `--gpu-architecture` the kernels are compiled for), and its fingerprint.
#![allow(unsafe_code)] // `is_culib_present` is an FFI dlopen probe; it calls no CUDA symbol.

use super::{CudaError, guarded};
use cudarc::driver::{CudaContext, sys};
use std::sync::Arc;

/// What the probe found about one device.
#[derive(Debug, Clone)]
pub(crate) struct DeviceInfo {
    /// Device name (`NVIDIA H200`).
    pub(crate) name: String,
    /// `GPU-xxxxxxxx-xxxx-...` as `nvidia-smi` prints it.
    pub(crate) uuid: String,
    /// Compute capability (major, minor).
    pub(crate) capability: (u32, u32),
    /// Driver's CUDA version as `major.minor` (e.g. `12.8`).
    pub(crate) driver_cuda_version: String,
    /// The context, ready for module loads.
    pub(crate) context: Arc<CudaContext>,
}

impl DeviceInfo {
    /// `--gpu-architecture` for this device: `sm_XY`, with the `a` suffix on 9.0 and 10.x so
    /// arch-specific instructions are allowed.
    pub(crate) fn arch(&self) -> String {
        arch_for(self.capability)
    }
}

/// `sm_XY` for a compute capability; `a` suffix where arch-specific features exist (9.0, 10.x).
pub(crate) fn arch_for((major, minor): (u32, u32)) -> String {
    let suffix = if major >= 9 && !(major == 9 && minor != 0) && major <= 10 {
        "a"
    } else {
        ""
    };
    format!("sm_{major}{minor}{suffix}")
}

fn driver_err(call: &str) -> impl Fn(cudarc::driver::DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver {
        call: call.into(),
        message: e.to_string(),
    }
}

/// Probe the driver and open device `ordinal`. A missing driver or device is an error value.
pub(crate) fn probe_device(ordinal: usize) -> Result<DeviceInfo, CudaError> {
    // SAFETY: a dlopen probe over candidate names; no CUDA symbol is called.
    if !unsafe { sys::is_culib_present() } {
        return Err(CudaError::NoDriver);
    }
    guarded("cuInit/cuCtx", || {
        let context = CudaContext::new(ordinal).map_err(driver_err("CudaContext::new"))?;
        let name = context.name().map_err(driver_err("cuDeviceGetName"))?;
        let (major, minor) = context
            .compute_capability()
            .map_err(driver_err("cuDeviceGetAttribute(compute capability)"))?;
        let uuid = context.uuid().map_err(driver_err("cuDeviceGetUuid"))?;
        let mut version: std::ffi::c_int = 0;
        // SAFETY: the driver is loaded (the context exists); the out-pointer is a live local.
        unsafe { sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(driver_err("cuDriverGetVersion"))?;
        Ok(DeviceInfo {
            name,
            uuid: format_uuid(&uuid.bytes.map(|b| b as u8)),
            capability: (major.max(0) as u32, minor.max(0) as u32),
            driver_cuda_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
            context,
        })
    })
}

/// `GPU-` plus the 16 bytes as 8-4-4-4-12 lowercase hex.
pub(crate) fn format_uuid(bytes: &[u8; 16]) -> String {
    let h = hex::encode(bytes);
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_follow_capability() {
        assert_eq!(arch_for((8, 0)), "sm_80");
        assert_eq!(arch_for((8, 9)), "sm_89");
        assert_eq!(arch_for((9, 0)), "sm_90a");
        assert_eq!(arch_for((10, 0)), "sm_100a");
        assert_eq!(arch_for((12, 0)), "sm_120");
    }

    #[test]
    fn uuid_formats_like_nvidia_smi() {
        let b: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(format_uuid(&b), "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
    }

    #[test]
    fn probe_without_driver_is_an_error_not_a_panic() {
        // Without libcuda: NoDriver, exactly. With it: the driver refuses the context (no device,
        // or no device usize::MAX), an error of the first driver call, never a panic.
        // SAFETY: the same dlopen probe `probe_device` makes; no CUDA symbol is called.
        let driver = unsafe { sys::is_culib_present() };
        match probe_device(usize::MAX) {
            Err(CudaError::NoDriver) => assert!(!driver, "NoDriver, but libcuda loads"),
            Err(CudaError::Driver { call, message }) if driver => {
                assert_eq!(call, "CudaContext::new", "{message}");
            }
            Err(e) => panic!("driver loadable: {driver}; unexpected error: {e}"),
            Ok(d) => panic!("ordinal usize::MAX opened device {}", d.name),
        }
    }
}
