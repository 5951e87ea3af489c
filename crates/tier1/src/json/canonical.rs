//! Canonical compact JSON for hashing: object keys sorted at every depth, no whitespace.

use serde_json::Value;

/// Canonical compact JSON: object keys sorted at every depth, no whitespace (serde_json's compact
/// form of the key-sorted value, written without building the sorted copy).
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    write_canonical(&mut out, value, None);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// [`canonical`] of the object `map` without its top-level key `skip` (the hash chain hashes a
/// row without its own link).
pub(crate) fn canonical_without(map: &serde_json::Map<String, Value>, skip: &str) -> String {
    let mut out = Vec::with_capacity(256);
    write_object(&mut out, map, Some(skip));
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

fn write_canonical(out: &mut Vec<u8>, v: &Value, skip: Option<&str>) {
    match v {
        Value::Object(m) => write_object(out, m, skip),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, x, None);
            }
            out.push(b']');
        }
        leaf => serde_json::to_writer(out, leaf).expect("a JSON leaf always serializes"),
    }
}

fn write_object(out: &mut Vec<u8>, m: &serde_json::Map<String, Value>, skip: Option<&str>) {
    let mut entries: Vec<(&String, &Value)> =
        m.iter().filter(|(k, _)| skip != Some(k.as_str())).collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, x)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k.as_str()).expect("a key always serializes");
        out.push(b':');
        write_canonical(out, x, None);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: serde_json's compact form of a deep copy with keys sorted.
    fn canonical_by_copy(v: &Value) -> String {
        fn sort(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut keys: Vec<&String> = m.keys().collect();
                    keys.sort();
                    let mut out = serde_json::Map::new();
                    for k in keys {
                        out.insert(k.clone(), sort(&m[k]));
                    }
                    Value::Object(out)
                }
                Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
                other => other.clone(),
            }
        }
        serde_json::to_string(&sort(v)).unwrap()
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            "[\\x00-\\x1f\"\\\\/]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("\\PC{0,6}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn canonical_equals_the_sorted_copy_definition(v in json_value()) {
            proptest::prop_assert_eq!(canonical(&v), canonical_by_copy(&v));
            if let Value::Object(m) = &v {
                let mut stripped = m.clone();
                let skip = m.keys().next().cloned().unwrap_or_default();
                stripped.shift_remove(&skip);
                proptest::prop_assert_eq!(
                    canonical_without(m, &skip),
                    canonical_by_copy(&Value::Object(stripped))
                );
            }
        }
    }

    #[test]
    fn canonical_sorts_keys() {
        let v: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":[{"z":1,"y":2}],"c":null}}"#).unwrap();
        assert_eq!(
            canonical(&v),
            r#"{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}"#
        );
    }
}
