//! Unit tests of `plans`.
use super::*;
use crate::bench::cuda::LAUNCHES;
use crate::bench::cuda::plan::DEFAULT_SHARED_LIMIT;
use crate::bench::targets::BUILTIN_KEYS;
use crate::suite::Suite;

fn shapes(key: &str, profile: &str) -> Shapes {
    let suite = Suite::embedded();
    let t = suite.target(key).expect("suite target");
    t.shapes.get(profile).cloned().expect("profile shapes")
}

#[test]
fn every_plan_is_valid_and_matches_kernel_signatures_at_minimal_smoke_and_cpu() {
    for key in BUILTIN_KEYS {
        for profile in ["minimal", "smoke", "cpu"] {
            let plan =
                plan(key, &shapes(key, profile)).unwrap_or_else(|e| panic!("{key} {profile}: {e}"));
            assert_eq!(plan.validate(), Vec::<String>::new(), "{key} {profile}");
            assert_eq!(
                plan.check_signatures(),
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
