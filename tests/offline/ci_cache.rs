//! `scripts/ci-cache.sh`, which `.ci/run` starts with: on a fresh machine (no
//! cache at all), after a change to `Cargo.lock` (the previous set moves to
//! the new key) and with the same `Cargo.lock` (the set is used as it is).
//! A fault here stops CI before any test runs, on exactly the machines that
//! have no cache yet.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A clean clone as far as the script can tell: the script and a `Cargo.lock`.
fn checkout(dir: &Path, lock: &str) -> PathBuf {
    let repo = dir.join("repo");
    fs::create_dir_all(repo.join("scripts")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ci-cache.sh");
    fs::copy(script, repo.join("scripts/ci-cache.sh")).unwrap();
    fs::write(repo.join("Cargo.lock"), lock).unwrap();
    repo
}

/// Runs the script of `repo` against the cache `root`; its output.
fn run(repo: &Path, root: &Path) -> String {
    let out = Command::new("bash")
        .arg(repo.join("scripts/ci-cache.sh"))
        .env("PITCHSIDE_CI_CACHE", root)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ci-cache.sh failed:\n{text}");
    text
}

/// The sets in the cache.
fn sets(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn a_fresh_machine_gets_an_empty_set_linked_from_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("no/cache/yet");
    let repo = checkout(dir.path(), "lock v1\n");
    run(&repo, &root);
    let sets = sets(&root);
    assert_eq!(sets.len(), 1);
    for d in ["target", "target-cross"] {
        assert_eq!(fs::read_link(repo.join(d)).unwrap(), sets[0].join(d));
        assert!(sets[0].join(d).is_dir());
    }
}

#[test]
fn a_changed_lock_starts_from_the_previous_set_and_the_same_lock_keeps_its_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cache");
    let first = checkout(&dir.path().join("a"), "lock v1\n");
    run(&first, &root);
    let old = sets(&root).remove(0);
    fs::write(old.join("target/compiled-dependency"), "kept").unwrap();

    let second = checkout(&dir.path().join("b"), "lock v2\n");
    let log = run(&second, &root);
    assert!(log.contains("starting from the previous set"), "{log}");
    let now = sets(&root);
    assert_eq!(now.len(), 1, "one set is kept");
    assert_ne!(now[0], old, "under the new lock's key");
    assert_eq!(
        fs::read_to_string(second.join("target/compiled-dependency")).unwrap(),
        "kept"
    );

    let third = checkout(&dir.path().join("c"), "lock v2\n");
    let log = run(&third, &root);
    assert!(!log.contains("previous set"), "{log}");
    assert_eq!(sets(&root), now);
    assert!(third.join("target/compiled-dependency").exists());
}
