//! Tests of the kernel sources' parsing, over every kernel file the table of targets embeds (a
//! test file: it may read the table above `cuda/`).
use super::*;
use crate::bench::table::KERNELS;

#[test]
fn entry_points_handles_attributes_and_line_breaks() {
    let src = "extern \"C\" __global__ void a(int x) {}\n\
               extern \"C\" __global__ void __launch_bounds__(256)\n    b_2(float* y) {}\n\
               __device__ void not_an_entry(int) {}\n";
    assert_eq!(entry_points(src), vec!["a".to_string(), "b_2".to_string()]);
}

#[test]
fn every_kernel_file_has_entries_and_no_include() {
    let includes = |s: &str| s.lines().any(|l| l.trim_start().starts_with("#include"));
    for k in KERNELS {
        assert!(
            !entry_points(k.source).is_empty(),
            "{} has no entry",
            k.file
        );
        assert!(!includes(k.source), "{} includes a header", k.file);
    }
    assert!(!includes(COMMON), "common.cuh includes a header");
}

#[test]
fn kernel_params_reads_kinds_in_order() {
    let src = "extern \"C\" __global__ void __launch_bounds__(256)\n  k2(const u8* __restrict__ a, \n\
               float* c, int m, long long off, float s) {}\n\
               extern \"C\" __global__ void k(u16 x) {}\n";
    use ParamKind::*;
    assert_eq!(
        kernel_params(src, "k2"),
        Some(vec![Ptr, Ptr, I32, I64, F32])
    );
    assert_eq!(
        kernel_params(src, "k"),
        None,
        "u16 by value is not passable"
    );
    assert_eq!(
        kernel_params(src, "2"),
        None,
        "a suffix of a name is not the name"
    );
    assert_eq!(kernel_params(src, "absent"), None);
}
