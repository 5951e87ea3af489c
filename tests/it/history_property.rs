//! Property: random sequences of producer runs (random metrics, random stale producers built on an
//! older live history) and occasional promotions, through publish and promote. No run is ever lost,
//! no normally published run becomes eligible, every output re-validates with a verified chain, and
//! each output keeps the previous live rows byte-identical as its prefix. A promotion the anchor
//! rules refuse (an outlier against the accepted runs) writes nothing.

use crate::history_support::*;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::PathBuf;
use tier1::history::chain::ChainState;
use tier1::history::package::IndexDoc;
use tier1::history_check::validate_history_root;

#[derive(Debug, Clone)]
enum Op {
    /// A producer built on the live history `back` versions ago publishes normally.
    Publish {
        back: usize,
        speedup: f64,
        savings: f64,
    },
    /// A candidate built on current live history is promoted.
    Promote { speedup: f64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..3, 0.5f64..4.0, -10.0f64..90.0)
            .prop_map(|(back, speedup, savings)| Op::Publish { back, speedup, savings }),
        1 => (1.1f64..4.0).prop_map(|speedup| Op::Promote { speedup }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn publication_and_promotion_keep_history_sound(ops in proptest::collection::vec(op(), 1..8)) {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        let suite = suite();
        let mut versions: Vec<PathBuf> = vec![w.join("live0")];
        bootstrap_live(w, &versions[0], &RunSpec::new("anchor", 0));
        let mut published: BTreeSet<String> = BTreeSet::from(["anchor".to_string()]);
        let mut anchors: BTreeSet<String> = published.clone();
        for (i, op) in ops.iter().enumerate() {
            let id = format!("r{i}");
            let live = versions.last().unwrap().clone();
            let out = w.join(format!("live{}", versions.len()));
            let cand = w.join(format!("cand-{id}"));
            match op {
                Op::Publish { back, speedup, savings } => {
                    let base = &versions[versions.len().saturating_sub(1 + back)];
                    let mut spec = RunSpec::new(&id, i as u32 + 1).speedup(*speedup);
                    spec.savings_pct = *savings;
                    candidate(Some(base), &cand, &spec);
                    let req = tier1::publish::MergeRequest {
                        candidate_root: cand.clone(),
                        canonical_root: live.clone(),
                        output_root: out.clone(),
                        run_id: id.clone(),
                        runner_class: None,
                    };
                    let o = tier1::publish::merge(&req, &suite).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert!(!o.baseline_eligible);
                }
                Op::Promote { speedup } => {
                    let spec = RunSpec::new(&id, i as u32 + 1).speedup(*speedup);
                    candidate(Some(&live), &cand, &spec);
                    let ev = w.join(format!("ev-{id}"));
                    evidence(&ev, &spec);
                    let mut req = promote_request(&cand, &ev, Some(&live), &out, &id);
                    req.allow_bootstrap = false;
                    match tier1::promote::promote(&req) {
                        Ok(_) => {
                            anchors.insert(id.clone());
                        }
                        // A speedup far from the accepted runs' is refused as an anchor (the
                        // outlier rule, docs/regression-model.md): nothing is written, and the
                        // live history stays as it was.
                        Err(e) if e.to_string().contains("it is not a good anchor") => {
                            prop_assert!(!out.exists(), "a refused promotion wrote {}", out.display());
                            continue;
                        }
                        Err(e) => return Err(TestCaseError::fail(e.to_string())),
                    }
                }
            }
            published.insert(id);
            let v = validate_history_root(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let chained = matches!(v.chain, ChainState::Chained { head: Some(_) });
            prop_assert!(chained, "the chain verifies");
            let ids: BTreeSet<String> = v.index.runs.iter().map(|r| r.run_id.clone()).collect();
            prop_assert_eq!(&ids, &published, "no run is ever lost");
            let eligible: BTreeSet<String> = v.index.runs.iter().filter(|r| r.is_eligible()).map(|r| r.run_id.clone()).collect();
            prop_assert_eq!(&eligible, &anchors, "only promotions make anchors");
            let prev = IndexDoc::load(&live).unwrap().unwrap();
            prop_assert_eq!(&v.doc.raw_rows()[..prev.raw_rows().len()], prev.raw_rows());
            versions.push(out);
        }
    }
}
