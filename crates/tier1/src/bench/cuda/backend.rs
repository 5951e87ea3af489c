//! `CudaBackend`: probes the device, compiles every kernel once per process for its architecture,
//! and turns a target's [`Plan`] into variants that enqueue their steps on one stream, timed with
//! CUDA events (the persistent-decode graph variant replays a captured CUDA graph).
#![allow(unsafe_code)] // kernel launches, raw device addresses and graph handles are FFI; each block says why.

use super::kernels::{check_capability, find};
use super::plan::{Arg, Output, Owner, Plan, Step};
use super::spec::CudaSide;
use super::{CudaError, DeviceInfo, compile, guarded, host, probe};
use crate::bench::backend::{Backend, BackendError, Shapes, Variant, VariantRun, Workload};
use crate::history::model::Environment;
use cudarc::driver::{
    CudaFunction, CudaGraph, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg, result,
    sys,
};
use cudarc::nvrtc::Ptx;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

type PtxSet = Arc<Vec<compile::CompiledKernel>>;

/// PTX of every kernel per architecture, compiled once per process.
static PTX_CACHE: OnceLock<Mutex<HashMap<String, PtxSet>>> = OnceLock::new();

/// The kernel file of every target in `sides` compiled for `arch` (cached: NVRTC runs once per
/// architecture and process; the process has one list, the table's).
pub(crate) fn compiled_for(sides: &[CudaSide], arch: &str) -> Result<PtxSet, CudaError> {
    let cache = PTX_CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(set) = map.get(arch) {
        return Ok(Arc::clone(set));
    }
    let set = Arc::new(compile::compile_all(sides, arch)?);
    map.insert(arch.to_string(), Arc::clone(&set));
    Ok(set)
}

fn driver(call: &str) -> impl Fn(result::DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver {
        call: call.into(),
        message: e.to_string(),
    }
}

fn device_err(e: CudaError) -> BackendError {
    BackendError::Device(e.to_string())
}

/// NVML, opened once per process for the machine-state records (`None` when it cannot load).
static NVML: OnceLock<Option<Mutex<crate::gpu::nvml::NvmlInventory>>> = OnceLock::new();

/// Clocks, temperature and throttle reasons of the GPU with `uuid`, through NVML (`None` when
/// NVML is unavailable or does not list the device).
fn device_state(uuid: &str) -> Option<crate::bench::machine::GpuState> {
    use crate::gpu::Inventory;
    let nvml = NVML
        .get_or_init(|| {
            crate::gpu::nvml::NvmlInventory::open(None)
                .ok()
                .map(Mutex::new)
        })
        .as_ref()?;
    let nvml = nvml.lock().unwrap_or_else(|e| e.into_inner());
    let count = nvml.device_count().ok()?;
    let g = (0..count)
        .filter_map(|i| nvml.device(i).ok())
        .find(|g| g.uuid == uuid)?;
    Some(crate::bench::machine::GpuState {
        sm_clock_mhz: g.clocks.sm_mhz,
        max_sm_clock_mhz: g.clocks.max_sm_mhz,
        memory_clock_mhz: g.clocks.memory_mhz,
        temperature_c: g.temperature_c,
        throttle_reasons: g.throttle_reasons,
    })
}

/// The CUDA backend over one device, for the targets whose CUDA sides it was given.
pub(crate) struct CudaBackend {
    info: DeviceInfo,
    /// The CUDA side of every built-in target (the table's list, handed down).
    sides: &'static [CudaSide],
    stream: Arc<CudaStream>,
    functions: BTreeMap<String, CudaFunction>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("device", &self.info.name)
            .field("arch", &self.info.arch())
            .finish_non_exhaustive()
    }
}

impl CudaBackend {
    /// Probe device `ordinal`, compile (or reuse) the kernels of `sides` for its architecture,
    /// load them; the backend prepares the targets of `sides` (the table of targets hands its
    /// list down: `crate::bench::cuda_backend`).
    pub(crate) fn new(
        ordinal: usize,
        sides: &'static [CudaSide],
    ) -> Result<CudaBackend, CudaError> {
        let info = probe::probe_device(ordinal)?;
        check_capability(sides, &info)?;
        let set = compiled_for(sides, &info.arch())?;
        guarded("load modules", || {
            let ctx = &info.context;
            // SAFETY: one stream carries every allocation, copy and launch of this backend, in
            // order, so cudarc's cross-stream event tracking is not needed (and would add events
            // to graph capture).
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
            let mut functions = BTreeMap::new();
            for k in set.iter() {
                let module = ctx
                    .load_module(Ptx::from_src(k.ptx.clone()))
                    .map_err(driver("cuModuleLoadData"))?;
                for name in super::entry_points(k.kernel.source) {
                    let f = module
                        .load_function(&name)
                        .map_err(driver("cuModuleGetFunction"))?;
                    functions.insert(name, f);
                }
            }
            Ok(CudaBackend {
                info: info.clone(),
                sides,
                stream,
                functions,
            })
        })
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }

    fn fingerprint(&self) -> Environment {
        Environment {
            backend: "cuda".into(),
            device_names: vec![self.info.name.clone()],
            device_uuids: vec![self.info.uuid.clone()],
            driver_version: None,
            cuda_version: Some(self.info.driver_cuda_version.clone()),
            runner: crate::bench::backend::runner_name(),
            profile: None,
            clock: None,
            runner_class: None,
        }
    }

    fn device_state(&self) -> Option<crate::bench::machine::GpuState> {
        device_state(&self.info.uuid)
    }

    fn prepare(&self, key: &str, shapes: &Shapes, seed: u64) -> Result<Workload, BackendError> {
        let side = find(self.sides, key)?;
        let (spec, kernel) = (&side.cuda, &side.kernel);
        let plan = (spec.plan)(shapes)?;
        let problems: Vec<String> = plan
            .validate()
            .into_iter()
            .chain(plan.check_signatures(self.sides.iter().map(|s| &s.kernel)))
            .collect();
        if !problems.is_empty() {
            return Err(BackendError::Device(format!(
                "plan of {key}: {}",
                problems.join("; ")
            )));
        }
        let (data, cpu) = (spec.inputs)(shapes, seed)?;
        let signature = cpu
            .variants
            .first()
            .map(|v| v.signature.clone())
            .ok_or_else(|| BackendError::Device(format!("CPU twin of {key} has no variants")))?;
        let inputs = Arc::new(self.upload(&plan, data).map_err(device_err)?);
        let mut variants = Vec::with_capacity(plan.variants.len());
        for (i, _) in plan.variants.iter().enumerate() {
            let run = self.variant(&plan, i, &inputs).map_err(device_err)?;
            variants.push(Variant {
                name: plan.variants[i].name.clone(),
                signature: signature.clone(),
                runner: Box::new(run),
            });
        }
        Ok(Workload {
            variants,
            work: cpu.work,
            baseline_file: format!("kernels/{}", kernel.file),
            reference: cpu.reference,
        })
    }
}

/// Device buffers by name.
type Buffers = HashMap<&'static str, CudaSlice<u8>>;

/// A step with every name resolved to a device address.
enum Resolved {
    Launch {
        func: CudaFunction,
        cfg: LaunchConfig,
        args: Vec<Scalar>,
    },
    Zero {
        ptr: u64,
        bytes: usize,
    },
    Copy {
        src: u64,
        dst: u64,
        bytes: usize,
    },
}

#[derive(Clone, Copy)]
enum Scalar {
    Ptr(u64),
    I32(i32),
    I64(i64),
    F32(f32),
}

impl CudaBackend {
    fn upload(&self, plan: &Plan, data: host::Inputs) -> Result<Buffers, CudaError> {
        guarded("upload inputs", || {
            let mut out = Buffers::new();
            for spec in plan.buffers.iter().filter(|b| b.owner == Owner::Input) {
                let Some((_, d)) = data.iter().find(|(n, _)| *n == spec.name) else {
                    return Err(CudaError::Driver {
                        call: "upload".into(),
                        message: format!(
                            "{}: no host data for input buffer {}",
                            plan.key, spec.name
                        ),
                    });
                };
                if d.bytes() as u64 != spec.bytes {
                    return Err(CudaError::Driver {
                        call: "upload".into(),
                        message: format!(
                            "{}: input {} has {} bytes, plan expects {}",
                            plan.key,
                            spec.name,
                            d.bytes(),
                            spec.bytes
                        ),
                    });
                }
                let slice = match d {
                    host::HostData::U8(v) => self.stream.clone_htod(v.as_slice()),
                    host::HostData::F32(v) => {
                        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                        self.stream.clone_htod(bytes.as_slice())
                    }
                }
                .map_err(driver("cuMemcpyHtoD"))?;
                out.insert(spec.name, slice);
            }
            Ok(out)
        })
    }

    fn variant(&self, plan: &Plan, i: usize, inputs: &Arc<Buffers>) -> Result<GpuRun, CudaError> {
        guarded("prepare variant", || {
            let mut own = Buffers::new();
            for spec in &plan.buffers {
                if spec.owner == Owner::Variant(i) || spec.owner == Owner::Each {
                    let s = self
                        .stream
                        .alloc_zeros::<u8>(spec.bytes as usize)
                        .map_err(driver("cuMemAlloc"))?;
                    own.insert(spec.name, s);
                }
            }
            let addr = |a: &Arg| -> Result<u64, CudaError> {
                let Arg::Buf { name, offset } = a else {
                    return Err(CudaError::Driver {
                        call: "resolve".into(),
                        message: format!("{a:?} is not a buffer"),
                    });
                };
                let s = own.get(name).or_else(|| inputs.get(name)).ok_or_else(|| {
                    CudaError::Driver {
                        call: "resolve".into(),
                        message: format!(
                            "{}: buffer {name} not allocated for variant {i}",
                            plan.key
                        ),
                    }
                })?;
                let (ptr, _sync) = s.device_ptr(&self.stream);
                Ok(ptr + offset)
            };
            let vp = &plan.variants[i];
            let mut steps = Vec::with_capacity(vp.steps.len());
            for step in &vp.steps {
                steps.push(match step {
                    Step::Launch(l) => Resolved::Launch {
                        func: self.functions.get(l.kernel).cloned().ok_or_else(|| {
                            CudaError::Driver {
                                call: "cuModuleGetFunction".into(),
                                message: format!("kernel {} not loaded", l.kernel),
                            }
                        })?,
                        cfg: LaunchConfig {
                            grid_dim: l.grid,
                            block_dim: l.block,
                            shared_mem_bytes: 0,
                        },
                        args: l
                            .args
                            .iter()
                            .map(|a| match a {
                                Arg::Buf { .. } => addr(a).map(Scalar::Ptr),
                                Arg::I32(v) => Ok(Scalar::I32(*v)),
                                Arg::I64(v) => Ok(Scalar::I64(*v)),
                                Arg::F32(v) => Ok(Scalar::F32(*v)),
                            })
                            .collect::<Result<_, _>>()?,
                    },
                    Step::Zero(name) => {
                        let bytes = plan.buffer(name).map_or(0, |b| b.bytes as usize);
                        Resolved::Zero {
                            ptr: addr(&super::plan::buf(name))?,
                            bytes,
                        }
                    }
                    Step::Copy { src, dst, bytes } => Resolved::Copy {
                        src: addr(src)?,
                        dst: addr(dst)?,
                        bytes: *bytes as usize,
                    },
                });
            }
            let ctx = &self.info.context;
            let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
            let mut run = GpuRun {
                stream: Arc::clone(&self.stream),
                start: ctx.new_event(timing).map_err(driver("cuEventCreate"))?,
                end: ctx.new_event(timing).map_err(driver("cuEventCreate"))?,
                steps,
                graph: None,
                output: vp.output.clone(),
                device_bytes: plan.variant_bytes(i),
                own,
                _inputs: Arc::clone(inputs),
            };
            if vp.graph {
                run.capture()?;
            }
            Ok(run)
        })
    }
}

/// A captured graph. SAFETY of `Send`: the graph is owned by one [`GpuRun`], which the harness
/// drives from one thread at a time (`&mut self`); it is never shared.
struct SendGraph(CudaGraph);
// SAFETY: see the type's comment: exclusive ownership, no concurrent access.
unsafe impl Send for SendGraph {}

/// One variant on the device.
struct GpuRun {
    stream: Arc<CudaStream>,
    start: cudarc::driver::CudaEvent,
    end: cudarc::driver::CudaEvent,
    steps: Vec<Resolved>,
    graph: Option<SendGraph>,
    output: Output,
    device_bytes: u64,
    own: Buffers,
    _inputs: Arc<Buffers>,
}

impl GpuRun {
    fn enqueue(&self) -> Result<(), CudaError> {
        let cu_stream = self.stream.cu_stream();
        for s in &self.steps {
            match s {
                Resolved::Launch { func, cfg, args } => {
                    let mut b = self.stream.launch_builder(func);
                    for a in args {
                        match a {
                            Scalar::Ptr(p) => b.arg(p),
                            Scalar::I32(v) => b.arg(v),
                            Scalar::I64(v) => b.arg(v),
                            Scalar::F32(v) => b.arg(v),
                        };
                    }
                    // SAFETY: the argument kinds and count match the kernel's declaration
                    // (`Plan::check_signatures` ran in `prepare`), every address lies inside a
                    // live buffer this run or its inputs own (`Plan::validate`), and the grid,
                    // block and shared memory are within the device limits checked there.
                    unsafe { b.launch(*cfg) }.map_err(driver("cuLaunchKernel"))?;
                }
                // SAFETY: `ptr..ptr+bytes` is a whole buffer this run owns; the stream is live.
                Resolved::Zero { ptr, bytes } => {
                    unsafe { result::memset_d8_async(*ptr, 0, *bytes, cu_stream) }
                        .map_err(driver("cuMemsetD8Async"))?
                }
                // SAFETY: both ranges lie inside live buffers (`Plan::validate`), same stream.
                Resolved::Copy { src, dst, bytes } => {
                    unsafe { result::memcpy_dtod_async(*dst, *src, *bytes, cu_stream) }
                        .map_err(driver("cuMemcpyDtoDAsync"))?
                }
            }
        }
        Ok(())
    }

    /// Record the steps once into a CUDA graph (replayed by `run`).
    fn capture(&mut self) -> Result<(), CudaError> {
        self.stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver("cuStreamBeginCapture"))?;
        let enqueued = self.enqueue();
        let graph = self
            .stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver("cuStreamEndCapture"))?;
        enqueued?;
        let graph = graph.ok_or_else(|| CudaError::Driver {
            call: "cuStreamEndCapture".into(),
            message: "captured an empty graph".into(),
        })?;
        graph.upload().map_err(driver("cuGraphUpload"))?;
        self.graph = Some(SendGraph(graph));
        Ok(())
    }

    /// Device time of `reps` back-to-back executions (launches or graph replays) between one
    /// pair of CUDA events.
    fn timed(&mut self, reps: u32) -> Result<f64, CudaError> {
        self.start
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        for _ in 0..reps {
            match &self.graph {
                Some(g) => g.0.launch().map_err(driver("cuGraphLaunch"))?,
                None => self.enqueue()?,
            }
        }
        self.end
            .record(&self.stream)
            .map_err(driver("cuEventRecord"))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(driver("cuEventElapsedTime"))?;
        Ok(f64::from(ms))
    }

    fn read(&self) -> Result<Vec<f32>, CudaError> {
        let get = |name: &str| {
            self.own.get(name).ok_or_else(|| CudaError::Driver {
                call: "read back".into(),
                message: format!("output buffer {name} not owned"),
            })
        };
        match &self.output {
            Output::F32 {
                buf,
                rows,
                cols,
                ld,
            } => {
                let bytes = self
                    .stream
                    .clone_dtoh(get(buf)?)
                    .map_err(driver("cuMemcpyDtoH"))?;
                Ok(host::crop_f32(&bytes, *rows, *cols, *ld))
            }
            Output::Kv { cache, scales, p } => {
                let elem = if scales.is_some() { 1 } else { 2 };
                let src = get(cache)?;
                let mut compact = Vec::new();
                for (off, len) in host::kv_segments(p, elem) {
                    let mut seg = vec![0u8; len];
                    self.stream
                        .memcpy_dtoh(&src.slice(off..off + len), &mut seg)
                        .map_err(driver("cuMemcpyDtoH"))?;
                    compact.extend_from_slice(&seg);
                }
                let scales = match scales {
                    Some(s) => {
                        let b = self
                            .stream
                            .clone_dtoh(get(s)?)
                            .map_err(driver("cuMemcpyDtoH"))?;
                        Some(
                            b.chunks_exact(4)
                                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                                .collect::<Vec<f32>>(),
                        )
                    }
                    None => None,
                };
                Ok(host::kv_decode(p, &compact, scales.as_deref()))
            }
        }
    }
}

impl VariantRun for GpuRun {
    fn run(&mut self) -> Result<Option<f64>, BackendError> {
        self.run_batch(1)
    }

    fn run_batch(&mut self, reps: u32) -> Result<Option<f64>, BackendError> {
        guarded("run variant", || self.timed(reps))
            .map(Some)
            .map_err(device_err)
    }

    fn output(&mut self) -> Result<Vec<f32>, BackendError> {
        guarded("variant output", || {
            self.timed(1)?;
            self.stream
                .synchronize()
                .map_err(driver("cuStreamSynchronize"))?;
            self.read()
        })
        .map_err(device_err)
    }

    fn device_peak_bytes(&self) -> Option<u64> {
        Some(self.device_bytes)
    }
}
