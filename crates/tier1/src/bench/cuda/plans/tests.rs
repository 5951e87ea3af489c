//! Unit tests of the per-target plans and host buffers, reached through the kernel registry over
//! the CUDA side of every target (the table's list: a test file may read the table above `cuda/`).
use crate::bench::backend::{BackendError, Shapes};
use crate::bench::cuda::host::{self, HostData, kv_decode, kv_segments};
use crate::bench::cuda::kernels::find;
use crate::bench::cuda::plan::{Arg, DEFAULT_SHARED_LIMIT, Output, Owner, Plan, Step, VariantPlan};
use crate::bench::table::{CUDA_SIDES, KERNELS, LAUNCHES};
use crate::bench::targets::{block_scaling, kv_standard, llama_3_1_8b};
use crate::suite::Suite;

/// The plan of built-in target `key` at `shapes`, looked up in the registry.
fn plan(key: &str, shapes: &Shapes) -> Result<Plan, BackendError> {
    (find(&CUDA_SIDES, key)?.cuda.plan)(shapes)
}

/// The host buffers and CPU twin of `key`, looked up in the registry.
fn inputs(
    key: &str,
    shapes: &Shapes,
    seed: u64,
) -> Result<(host::Inputs, crate::bench::backend::Workload), BackendError> {
    (find(&CUDA_SIDES, key)?.cuda.inputs)(shapes, seed)
}

fn shapes(key: &str, profile: &str) -> Shapes {
    let suite = Suite::embedded();
    let t = suite.target(key).expect("suite target");
    t.shapes.get(profile).cloned().expect("profile shapes")
}

#[test]
fn every_plan_is_valid_and_matches_kernel_signatures_at_minimal_smoke_and_cpu() {
    for (key, ..) in LAUNCHES {
        for profile in ["minimal", "smoke", "cpu"] {
            let plan =
                plan(key, &shapes(key, profile)).unwrap_or_else(|e| panic!("{key} {profile}: {e}"));
            assert_eq!(plan.validate(), Vec::<String>::new(), "{key} {profile}");
            assert_eq!(
                plan.check_signatures(KERNELS.iter()),
                Vec::<String>::new(),
                "{key} {profile}"
            );
            let (_, base, opt) = LAUNCHES.iter().find(|(k, ..)| *k == key).expect("registry");
            for (i, v) in plan.variants.iter().enumerate() {
                let allowed: &[&str] = if i == 0 || v.graph { base } else { opt };
                let mut used = std::collections::BTreeSet::new();
                for s in &v.steps {
                    if let Step::Launch(l) = s {
                        assert!(
                            allowed.contains(&l.kernel),
                            "{key} {}: {} not registered",
                            v.name,
                            l.kernel
                        );
                        assert!(l.shared_bytes <= DEFAULT_SHARED_LIMIT);
                        used.insert(l.kernel);
                    }
                }
                assert_eq!(
                    used.len(),
                    allowed.len(),
                    "{key} {}: launches {used:?}, registry {allowed:?}",
                    v.name
                );
                assert!(
                    plan.variant_bytes(i) > 0,
                    "{key} {}: no device memory",
                    v.name
                );
            }
            assert_eq!(plan.variants[0].name, "baseline");
        }
    }
}

#[test]
fn block_scaling_pads_smoke_shapes_to_the_mma_tile_and_crops_the_output() {
    let p = plan("block_scaling", &shapes("block_scaling", "smoke")).expect("plan");
    let Step::Launch(l) = &p.variants[1].steps[0] else {
        panic!("launch expected")
    };
    assert_eq!(
        (l.kernel, l.grid, l.block),
        ("block_scaling_fused_mma", (1, 1, 1), (256, 1, 1))
    );
    assert_eq!(l.args[5..], [Arg::I32(128), Arg::I32(128), Arg::I32(128)]);
    assert_eq!(
        p.variants[1].output,
        Output::F32 {
            buf: "c_fused",
            rows: 64,
            cols: 64,
            ld: 128
        }
    );
    assert_eq!(p.buffer("a").map(|b| b.bytes), Some(128 * 128 / 2));
    let m = plan("block_scaling", &shapes("block_scaling", "minimal")).expect("plan");
    let Step::Launch(l) = &m.variants[1].steps[0] else {
        panic!("launch expected")
    };
    assert_eq!(l.grid, (64, 64, 1));
    assert_eq!(l.shared_bytes, 20480);
}

#[test]
fn decode_graph_replays_the_baseline_launches_on_its_own_buffers() {
    let p = plan("persistent_decode", &shapes("persistent_decode", "minimal")).expect("plan");
    let (base, graph) = (&p.variants[0], &p.variants[1]);
    assert!(graph.graph && !base.graph);
    assert_eq!(base.steps.len(), 3 * 32);
    assert_eq!(graph.steps.len(), base.steps.len());
    let kernels = |v: &VariantPlan| {
        v.steps
            .iter()
            .map(|s| match s {
                Step::Launch(l) => l.kernel,
                _ => "",
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(kernels(base), kernels(graph));
    assert_ne!(
        base.steps, graph.steps,
        "the graph variant writes its own buffers"
    );
    assert_eq!(p.variants[2].steps.len(), 1);
}

#[test]
fn kv_memory_fp8_is_about_half_of_bf16() {
    let p = plan("kv_standard", &shapes("kv_standard", "minimal")).expect("plan");
    let (bf16, fp8) = (p.variant_bytes(0), p.variant_bytes(1));
    assert_eq!(bf16, 8 * 32 * 2 * 32 * 8192 * 128 * 2);
    assert_eq!(fp8, bf16 / 2 + 32 * 8192 * 4);
}

#[test]
fn unsupported_shapes_are_shape_errors() {
    let mut s = shapes("flashattention4_alibi", "smoke");
    s.insert("head_dim".into(), 96);
    assert!(
        matches!(plan("flashattention4_alibi", &s), Err(BackendError::Shape { param, .. }) if param == "head_dim")
    );
    assert!(matches!(
        plan("nope", &s),
        Err(BackendError::Unsupported { .. })
    ));
    let mut g = shapes("gradient_fusion", "smoke");
    g.insert("tensor_elems".into(), 1 << 32);
    assert!(matches!(
        plan("gradient_fusion", &g),
        Err(BackendError::Shape { .. })
    ));
}

/// `kv_append_bf16` of `kernels/kv_standard.cu`, emulated on the host over the uploaded layout.
fn emulate_bf16(p: &kv_standard::Params, src: &[f32]) -> Vec<u8> {
    let mut cache = vec![0u8; p.cache_elems() * 2];
    let per_layer = p.batch * 2 * p.heads * p.head_dim;
    for pos in 0..p.steps {
        let step = &src[pos * p.active_layers * per_layer..(pos + 1) * p.active_layers * per_layer];
        for (x, v) in step.iter().enumerate() {
            let (layer, mut r) = (x / per_layer, x % per_layer);
            let c = r % p.head_dim;
            r /= p.head_dim;
            let h = r % p.heads;
            r /= p.heads;
            let (kv, b) = (r % 2, r / 2);
            let at = ((((b * p.layers + layer) * 2 + kv) * p.heads + h) * p.max_seq + pos)
                * p.head_dim
                + c;
            cache[2 * at..2 * at + 2].copy_from_slice(&kv_standard::to_bf16(*v).to_le_bytes());
        }
    }
    cache
}

#[test]
fn kv_upload_layout_and_read_back_match_the_cpu_twin() {
    let p = kv_standard::Params {
        batch: 2,
        layers: 3,
        heads: 2,
        max_seq: 9,
        head_dim: 4,
        steps: 5,
        active_layers: 2,
    };
    let inp = kv_standard::inputs(p, 42);
    let cache = emulate_bf16(&p, &super::kv_standard::kv_src(&inp));
    let compact: Vec<u8> = kv_segments(&p, 2)
        .into_iter()
        .flat_map(|(o, l)| cache[o..o + l].to_vec())
        .collect();
    let want = kv_standard::read_back(&p, &kv_standard::append_bf16(&inp));
    assert_eq!(kv_decode(&p, &compact, None), want);
    // FP8: codes in the same layout, one scale per (layer, pos).
    let codes: Vec<u8> = compact
        .chunks_exact(2)
        .map(|c| kv_standard::to_e4m3(kv_standard::from_bf16(u16::from_le_bytes([c[0], c[1]]))))
        .collect();
    let scales = vec![1.0f32; p.layers * p.max_seq];
    let got = kv_decode(&p, &codes, Some(&scales));
    assert_eq!(got.len(), want.len());
    assert!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| (g - w).abs() <= w.abs() / 8.0 + 1e-2)
    );
}

#[test]
fn block_scaling_padding_keeps_rows_and_zeroes_the_rest() {
    let p = block_scaling::Params {
        m: 3,
        n: 130,
        k: 48,
    };
    let inp = block_scaling::inputs(p, 7);
    let data = super::block_scaling::host_inputs(&inp);
    let HostData::U8(a) = &data[0].1 else {
        panic!("bytes expected")
    };
    assert_eq!(a.len(), 128 * 64 / 2);
    assert_eq!(
        &a[32..32 + 24],
        &inp.a[24..48],
        "row 1 starts at the padded stride"
    );
    assert!(a[24..32].iter().all(|b| *b == 0) && a[3 * 32..].iter().all(|b| *b == 0));
    let HostData::U8(b) = &data[2].1 else {
        panic!("bytes expected")
    };
    assert_eq!(b.len(), 256 * 64 / 2);
}

#[test]
fn llama_weights_are_transposed_and_rope_permuted() {
    let p = llama_3_1_8b::Params {
        layers: 1,
        hidden: 8,
        heads: 2,
        kv_heads: 1,
        mlp: 6,
        seq: 3,
        batch: 1,
    };
    let inp = llama_3_1_8b::inputs(p, 3);
    let data = super::llama_3_1_8b::host_inputs(&inp);
    let get = |n: &str| match &data.iter().find(|(k, _)| *k == n).expect("buffer").1 {
        HostData::F32(v) => v.clone(),
        HostData::U8(_) => panic!("f32 expected"),
    };
    let (h, hd, kvd) = (8, 4, 4);
    let wqkv = get("wqkv");
    assert_eq!(wqkv.len(), (h + 2 * kvd) * h);
    let l = &inp.layers[0];
    // q row 1 of head 0 is CPU column super::llama_3_1_8b::rope_perm(1) = 2; q row 2 is column 1.
    for i in 0..h {
        assert_eq!(wqkv[h + i], l.wq[i * h + 2]);
        assert_eq!(wqkv[2 * h + i], l.wq[i * h + 1]);
        assert_eq!(
            wqkv[(h + kvd + 3) * h + i],
            l.wv[i * kvd + 3],
            "v rows are not permuted"
        );
    }
    let mut seen: Vec<usize> = (0..hd)
        .map(|c| super::llama_3_1_8b::rope_perm(c, hd))
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..hd).collect::<Vec<_>>());
    let wdown = get("wdown");
    assert_eq!(
        wdown[5],
        l.w_down[5 * h],
        "row 0 of [out, in] is column 0 of [in, out]"
    );
    assert_eq!(get("mask")[1], f32::NEG_INFINITY);
}

#[test]
fn every_target_has_host_data_of_the_planned_sizes_at_smoke() {
    let suite = crate::suite::Suite::embedded();
    for (key, ..) in LAUNCHES {
        let shapes = suite
            .target(key)
            .and_then(|t| t.shapes.get("smoke").cloned())
            .expect("smoke");
        let plan = plan(key, &shapes).expect("plan");
        let (data, cpu) = inputs(key, &shapes, 42).expect("inputs");
        for spec in plan.buffers.iter().filter(|b| b.owner == Owner::Input) {
            let d = data
                .iter()
                .find(|(n, _)| *n == spec.name)
                .unwrap_or_else(|| panic!("{key}: no data for {}", spec.name));
            assert_eq!(d.1.bytes() as u64, spec.bytes, "{key} {}", spec.name);
        }
        assert!(!cpu.variants.is_empty());
    }
}
