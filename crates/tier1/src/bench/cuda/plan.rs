//! Device-free launch plans: the buffers a CUDA workload allocates and, per variant, its ordered
//! steps (kernel launches with grid, block, static shared memory and typed arguments; zero fills;
//! copies) and how its output is read back. Plans depend on shapes only, so every launcher is
//! checked here without a GPU (`Plan::validate`, `check_signatures`).

use super::source::{KernelSource, ParamKind, kernel_params};
use crate::bench::backend::BackendError;
use crate::bench::targets::kv_standard;

/// Shared memory a block may use without opting in (`cudaFuncSetAttribute`): 48 KiB.
pub(crate) const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// One kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Arg {
    /// The device address of buffer `name` plus `offset` bytes.
    Buf {
        /// Buffer name in [`Plan::buffers`].
        name: &'static str,
        /// Byte offset into it.
        offset: u64,
    },
    /// `int`.
    I32(i32),
    /// `long long`.
    I64(i64),
    /// `float`.
    F32(f32),
}

impl Arg {
    /// The parameter kind this argument fills.
    pub(crate) fn kind(&self) -> ParamKind {
        match self {
            Arg::Buf { .. } => ParamKind::Ptr,
            Arg::I32(_) => ParamKind::I32,
            Arg::I64(_) => ParamKind::I64,
            Arg::F32(_) => ParamKind::F32,
        }
    }
}

/// Buffer `name` at offset 0.
pub(crate) fn buf(name: &'static str) -> Arg {
    Arg::Buf { name, offset: 0 }
}

/// Buffer `name` at `offset` bytes.
pub(crate) fn buf_at(name: &'static str, offset: usize) -> Arg {
    Arg::Buf {
        name,
        offset: offset as u64,
    }
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    /// `extern "C"` entry name.
    pub(crate) kernel: &'static str,
    /// Grid (blocks).
    pub(crate) grid: (u32, u32, u32),
    /// Block (threads).
    pub(crate) block: (u32, u32, u32),
    /// Static shared memory of the kernel in bytes (from the `__shared__` arrays of its source;
    /// dynamic shared memory is 0 for every kernel).
    pub(crate) shared_bytes: u32,
    /// Arguments in the kernel's parameter order.
    pub(crate) args: Vec<Arg>,
}

/// One step of a variant, enqueued in order on the backend's stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// A kernel launch.
    Launch(Launch),
    /// Zero a whole buffer.
    Zero(&'static str),
    /// Copy `bytes` from `src` to `dst` (both [`Arg::Buf`]).
    Copy {
        /// Source.
        src: Arg,
        /// Destination.
        dst: Arg,
        /// Byte count.
        bytes: u64,
    },
}

/// Who owns a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// An input uploaded once from the host, shared by every variant.
    Input,
    /// Scratch or output of variant `i` (zero-initialized; counted as that variant's memory).
    Variant(usize),
    /// Scratch every variant uses under the same name: each allocates its own zeroed copy
    /// (counted in each variant's memory).
    Each,
}

/// A device buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BufSpec {
    /// Name used by [`Arg::Buf`].
    pub(crate) name: &'static str,
    /// Size in bytes.
    pub(crate) bytes: u64,
    /// Owner.
    pub(crate) owner: Owner,
}

/// How a variant's output is read back as the CPU twin's `Vec<f32>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Output {
    /// f32 matrix `rows×cols` with row stride `ld` elements (cropped when `ld > cols`).
    F32 {
        /// Buffer.
        buf: &'static str,
        /// Rows.
        rows: usize,
        /// Columns kept.
        cols: usize,
        /// Row stride in elements.
        ld: usize,
    },
    /// A KV cache: bf16 values (`scales: None`) or FP8 E4M3 codes with per-(layer, position)
    /// scales; the written tokens are dequantized in the CPU twin's order.
    Kv {
        /// Cache buffer.
        cache: &'static str,
        /// Scale buffer of the FP8 cache.
        scales: Option<&'static str>,
        /// Shapes.
        p: kv_standard::Params,
    },
}

/// One variant's plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantPlan {
    /// `baseline` or `optimized_<technique>`.
    pub(crate) name: String,
    /// Steps of one run.
    pub(crate) steps: Vec<Step>,
    /// Capture the steps into a CUDA graph once and replay it per run.
    pub(crate) graph: bool,
    /// Output read-back.
    pub(crate) output: Output,
}

/// A target's device plan: buffers, then variants (baseline first).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// Suite target key.
    pub(crate) key: &'static str,
    /// Every buffer.
    pub(crate) buffers: Vec<BufSpec>,
    /// Baseline first.
    pub(crate) variants: Vec<VariantPlan>,
}

impl Plan {
    /// The buffer named `name`.
    pub(crate) fn buffer(&self, name: &str) -> Option<&BufSpec> {
        self.buffers.iter().find(|b| b.name == name)
    }

    /// Bytes of the buffers variant `i` owns (its device memory figure).
    pub(crate) fn variant_bytes(&self, i: usize) -> u64 {
        self.buffers
            .iter()
            .filter(|b| b.owner == Owner::Variant(i) || b.owner == Owner::Each)
            .map(|b| b.bytes)
            .sum()
    }

    /// Every structural rule a launch must satisfy, as a list of problems (empty when valid):
    /// names resolve, offsets stay inside buffers, grid and block within device limits, static
    /// shared memory within [`DEFAULT_SHARED_LIMIT`], variant owners exist, names are unique.
    pub(crate) fn validate(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for (i, b) in self.buffers.iter().enumerate() {
            if self.buffers[..i].iter().any(|o| o.name == b.name) {
                bad.push(format!("buffer {} declared twice", b.name));
            }
            if b.bytes == 0 {
                bad.push(format!("buffer {} has 0 bytes", b.name));
            }
            if let Owner::Variant(v) = b.owner
                && v >= self.variants.len()
            {
                bad.push(format!("buffer {} owned by missing variant {v}", b.name));
            }
        }
        let check_buf = |bad: &mut Vec<String>, at: &str, a: &Arg, len: u64| {
            if let Arg::Buf { name, offset } = a {
                match self.buffer(name) {
                    None => bad.push(format!("{at}: unknown buffer {name}")),
                    Some(b) if offset + len > b.bytes => bad.push(format!(
                        "{at}: buffer {name} has {} bytes, found offset {offset} + {len}",
                        b.bytes
                    )),
                    Some(_) => {}
                }
            }
        };
        for v in &self.variants {
            for (si, step) in v.steps.iter().enumerate() {
                let at = format!("{} {} step {si}", self.key, v.name);
                match step {
                    Step::Launch(l) => {
                        let at = format!("{at} ({})", l.kernel);
                        for a in &l.args {
                            check_buf(&mut bad, &at, a, 1);
                        }
                        let threads = l.block.0 * l.block.1 * l.block.2;
                        if threads == 0 || threads > 1024 || l.block.2 > 64 {
                            bad.push(format!("{at}: block {:?} out of range", l.block));
                        }
                        let (gx, gy, gz) = l.grid;
                        if gx == 0 || gy == 0 || gz == 0 || gx > i32::MAX as u32 {
                            bad.push(format!("{at}: grid {:?} out of range", l.grid));
                        }
                        if gy > 65535 || gz > 65535 {
                            bad.push(format!("{at}: grid {:?}: y and z at most 65535", l.grid));
                        }
                        if l.shared_bytes > DEFAULT_SHARED_LIMIT {
                            bad.push(format!(
                                "{at}: {} bytes of shared memory, limit {DEFAULT_SHARED_LIMIT}",
                                l.shared_bytes
                            ));
                        }
                    }
                    Step::Zero(name) => check_buf(&mut bad, &at, &buf(name), 0),
                    Step::Copy { src, dst, bytes } => {
                        check_buf(&mut bad, &at, src, *bytes);
                        check_buf(&mut bad, &at, dst, *bytes);
                    }
                }
            }
            let out = match &v.output {
                Output::F32 { buf, .. } => buf,
                Output::Kv { cache, .. } => cache,
            };
            if self.buffer(out).is_none() {
                bad.push(format!(
                    "{} {}: output buffer {out} unknown",
                    self.key, v.name
                ));
            }
        }
        bad
    }

    /// Every launch's argument kinds against the kernel's declared parameters (parsed from the
    /// embedded `.cu` sources `kernels`, normally every kernel file: the table's `KERNELS`, or the
    /// backend's CUDA sides), as a list of mismatches (empty when all agree).
    pub(crate) fn check_signatures<'k>(
        &self,
        kernels: impl Iterator<Item = &'k KernelSource> + Clone,
    ) -> Vec<String> {
        let mut bad = Vec::new();
        for v in &self.variants {
            for step in &v.steps {
                let Step::Launch(l) = step else { continue };
                let declared = kernels
                    .clone()
                    .find_map(|k| kernel_params(k.source, l.kernel));
                let found: Vec<ParamKind> = l.args.iter().map(Arg::kind).collect();
                match declared {
                    None => bad.push(format!("{}: kernel {} not found", v.name, l.kernel)),
                    Some(d) if d != found => bad.push(format!(
                        "{} {}: declared {d:?}, launched with {found:?}",
                        v.name, l.kernel
                    )),
                    Some(_) => {}
                }
            }
        }
        bad
    }
}

/// Blocks of `block` threads covering `n` items (at least 1).
pub(crate) fn blocks(n: usize, block: u32) -> u32 {
    n.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32
}

/// Blocks for a grid-stride kernel: enough to cover `n`, at most `cap`.
pub(crate) fn blocks_capped(n: usize, block: u32, cap: u32) -> u32 {
    blocks(n, block).min(cap)
}

/// A shape value as a kernel `int`, or a shape error naming it.
pub(crate) fn int(key: &str, param: &str, v: usize) -> Result<i32, BackendError> {
    i32::try_from(v).map_err(|_| BackendError::Shape {
        key: key.into(),
        param: param.into(),
        message: format!("{v} exceeds the kernels' 32-bit int ({})", i32::MAX),
    })
}

/// A 1-D launch.
pub(crate) fn launch(
    kernel: &'static str,
    grid: u32,
    block: u32,
    shared_bytes: u32,
    args: Vec<Arg>,
) -> Step {
    Step::Launch(Launch {
        kernel,
        grid: (grid, 1, 1),
        block: (block, 1, 1),
        shared_bytes,
        args,
    })
}

/// A launch with explicit 3-D grid and block.
pub(crate) fn launch3(
    kernel: &'static str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_bytes: u32,
    args: Vec<Arg>,
) -> Step {
    Step::Launch(Launch {
        kernel,
        grid,
        block,
        shared_bytes,
        args,
    })
}
