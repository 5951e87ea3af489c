//! A CUDA kernel source: the embedded file with the target it implements and the device
//! helpers prepended to it (`kernels/common.cuh`), and the parsing of its `extern "C" __global__`
//! entries and their parameter kinds (what the launch plans are checked against).

/// Device helpers prepended to every kernel file before NVRTC sees it (NVRTC has no headers).
pub(crate) const COMMON: &str = include_str!("../../../../../kernels/common.cuh");

/// One kernel file and the suite target it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// File name under `kernels/`.
    pub file: &'static str,
    /// Suite target key (`configs/benchmark_suites/tier1.yaml`).
    pub target_key: &'static str,
    /// Minimum compute capability (major, minor) the file needs.
    pub min_capability: (u32, u32),
    /// The file's text.
    pub source: &'static str,
}

impl KernelSource {
    /// The translation unit NVRTC compiles: `common.cuh`, then a `#line` reset, then the file.
    pub(crate) fn full_source(&self) -> String {
        format!("{COMMON}\n#line 1 \"{}\"\n{}", self.file, self.source)
    }
}

/// The `extern "C" __global__` entry names declared in `source`, in order of appearance.
/// Understands attributes between `__global__` and the return type
/// (`__launch_bounds__(...)`) and declarations spread over several lines.
pub fn entry_points(source: &str) -> Vec<String> {
    const MARK: &str = "extern \"C\" __global__";
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let Some(paren) = find_param_list(rest) else {
            break;
        };
        let head = rest[..paren].trim_end();
        let name: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
        rest = &rest[paren..];
    }
    names
}

/// Kind of one kernel parameter, as the launch plans pass it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// Any pointer (`const float* __restrict__`, `u8*`, ...): a device address.
    Ptr,
    /// `int`.
    I32,
    /// `long long`.
    I64,
    /// `float`.
    F32,
}

/// The parameter kinds of entry `entry` declared in `source` (`None` when the entry is absent or
/// a parameter has a type the launch plans cannot pass).
pub(crate) fn kernel_params(source: &str, entry: &str) -> Option<Vec<ParamKind>> {
    const MARK: &str = "extern \"C\" __global__";
    let mut rest = source;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let open = find_param_list(rest)?;
        let head = rest[..open].trim_end();
        let close = open + rest[open..].find(')')?;
        if head.ends_with(entry)
            && !head[..head.len() - entry.len()]
                .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            let list = rest[open + 1..close].trim();
            if list.is_empty() {
                return Some(Vec::new());
            }
            return list.split(',').map(param_kind).collect();
        }
        rest = &rest[close..];
    }
    None
}

fn param_kind(decl: &str) -> Option<ParamKind> {
    if decl.contains('*') {
        return Some(ParamKind::Ptr);
    }
    let words: Vec<&str> = decl
        .split_whitespace()
        .filter(|w| *w != "const" && *w != "unsigned")
        .collect();
    match words.as_slice() {
        ["int", _] => Some(ParamKind::I32),
        ["long", "long", _] => Some(ParamKind::I64),
        ["float", _] => Some(ParamKind::F32),
        _ => None,
    }
}

/// Byte offset of the `(` opening the parameter list: the first `(` not belonging to a
/// `__launch_bounds__(...)` or `__align__(...)` attribute.
fn find_param_list(s: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let open = from + s[from..].find('(')?;
        let before = s[..open].trim_end();
        if before.ends_with("__launch_bounds__") || before.ends_with("__align__") {
            let close = open + s[open..].find(')')?;
            from = close + 1;
        } else {
            return Some(open);
        }
    }
}

#[cfg(test)]
mod tests;
