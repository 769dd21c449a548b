use super::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

const COMMITTED: &str = "docs/src/reference/config-keys.md";

/// [`COMMITTED`], in this crate's folder or the nearest one above it that
/// has it (the repository's root, once the crate is in a workspace).
fn committed_path() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|d| d.join(COMMITTED))
        .find(|p| p.exists())
        .unwrap_or_else(|| here.join(COMMITTED))
}

#[test]
fn the_committed_reference_is_the_one_the_declarations_make() {
    let path = committed_path();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == markdown(),
        "{} differs from the section declarations in crates/pitchside-core/src/config/; regenerate it with\n  \
         cargo run -- check-config --reference > {COMMITTED}",
        path.display()
    );
}

/// Dotted paths of the leaves of a TOML table (a list, of values or of
/// sections, is one leaf, as `check-config` prints an empty one).
fn leaves(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
    for (k, v) in t {
        let key = join(prefix, k);
        match v {
            toml::Value::Table(inner) => leaves(&key, inner, out),
            v => {
                out.insert(key, v.clone());
            }
        }
    }
}

#[test]
fn every_key_check_config_prints_for_the_demo_is_in_the_reference_with_its_default() {
    let printed: toml::Table = {
        let c = crate::config::parse_validated(crate::config::DEMO, "demo").unwrap();
        toml::from_str(&c.to_toml()).unwrap()
    };
    let written: toml::Table = toml::from_str(crate::config::DEMO).unwrap();
    let (mut p, mut w) = (BTreeMap::new(), BTreeMap::new());
    leaves("", &printed, &mut p);
    leaves("", &written, &mut w);
    let reference: BTreeMap<String, Entry> =
        entries().into_iter().map(|e| (e.path.clone(), e)).collect();
    assert!(p.len() > 50, "the demo prints {} keys", p.len());
    for (key, value) in &p {
        let Some(e) = reference.get(key) else {
            panic!("check-config prints {key}, which the reference does not have");
        };
        if !w.contains_key(key) {
            assert_eq!(
                e.default.as_ref(),
                Some(value),
                "{key}: the reference's default is not what check-config prints"
            );
        }
    }
}

#[test]
fn every_key_has_doc_text_and_every_optional_leaf_a_default_or_unset() {
    for e in entries() {
        assert!(!e.key.doc_line().is_empty(), "{} has no doc text", e.path);
        assert!(
            !(e.key.required && e.key.default.is_some()),
            "{} is required and has a default",
            e.path
        );
    }
}
