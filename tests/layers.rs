//! The source tree's layering (README "Architecture"): every top-level
//! module of `src/` is a layer, and non-test code imports only from layers
//! below its own or from its own folder; and no two files import each other,
//! directly or round a loop. Test code (`tests.rs`, `#[cfg(test)]` modules)
//! may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module may import from layers before its own.
const LAYERS: [&str; 11] = [
    "model",
    "util",
    "config",
    "mqtt",
    "tables",
    "pipeline",
    "state",
    "sources",
    "sinks",
    "telemetry",
    "commands",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` but `main.rs` and `lib.rs`, as module paths
/// (`pipeline::decode::json`) → file.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src(), &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|l| l == "mod") {
            parts.pop();
        }
        let name = parts.join("::");
        if name != "main" && name != "lib" && !parts.iter().any(|p| p == "tests") {
            out.insert(name, f);
        }
    }
    out
}

/// The file's text without `#[cfg(test)]` items (a module or function: from
/// the attribute to the end of the item's braces) and without comments.
fn non_test_code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let Some(open) = after.find(['{', ';']) else {
            break;
        };
        if after.as_bytes()[open] == b';' {
            rest = &after[open + 1..];
            continue;
        }
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a file names with `crate::a::b::…` or `super::…`, resolved to
/// the longest module path that exists.
fn imports(module: &str, text: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let is_mod_rs = known[module].ends_with("mod.rs");
    let mut parent: Vec<&str> = module.split("::").collect();
    if !is_mod_rs {
        parent.pop();
    }
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        for (at, _) in text.match_indices(prefix) {
            if at > 0 {
                let b = text.as_bytes()[at - 1];
                if b.is_ascii_alphanumeric() || b == b'_' || b == b':' {
                    continue;
                }
            }
            let tail = &text[at + prefix.len()..];
            let path: Vec<&str> = tail
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            let mut full: Vec<&str> = base.clone();
            full.extend(path);
            for n in (1..=full.len()).rev() {
                let candidate = full[..n].join("::");
                if known.contains_key(&candidate) {
                    if candidate != module {
                        out.insert(candidate);
                    }
                    break;
                }
            }
        }
    }
    out
}

fn layer(module: &str) -> usize {
    let top = module.split("::").next().unwrap();
    LAYERS
        .iter()
        .position(|l| *l == top)
        .unwrap_or_else(|| panic!("src/{top} is not in LAYERS: place it in tests/layers.rs"))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    known
        .iter()
        .map(|(m, f)| {
            let text = non_test_code(&std::fs::read_to_string(f).unwrap());
            (m.clone(), imports(m, &text, &known))
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for (m, deps) in graph() {
        for d in deps {
            let same_folder = m.split("::").next() == d.split("::").next();
            if !same_folder && layer(&d) > layer(&m) {
                wrong.push(format!("{m} imports {d}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from above:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_modules_import_each_other_round_a_loop() {
    let g = graph();
    // Depth-first search with colours; a grey node met again is a cycle.
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
        cycles: &mut Vec<String>,
    ) {
        colour.insert(n, 1);
        stack.push(n);
        for d in &g[n] {
            match colour.get(d.as_str()).copied().unwrap_or(0) {
                0 => visit(d, g, colour, stack, cycles),
                1 => {
                    let from = stack.iter().position(|s| s == d).unwrap();
                    cycles.push(format!("{} -> {d}", stack[from..].join(" -> ")));
                }
                _ => {}
            }
        }
        stack.pop();
        colour.insert(n, 2);
    }
    let mut colour = BTreeMap::new();
    let mut cycles = Vec::new();
    for n in g.keys() {
        if !colour.contains_key(n.as_str()) {
            visit(n, &g, &mut colour, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(cycles.is_empty(), "cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_checker_sees_imports_and_skips_test_code() {
    let text = "use crate::util::time::now;\nfn f() { super::x(); }\n#[cfg(test)]\nmod tests { use crate::commands::run; }\n// crate::sinks\n";
    let code = non_test_code(text);
    assert!(
        code.contains("crate::util::time") && !code.contains("commands") && !code.contains("sinks")
    );
    let g = graph();
    assert!(
        g["pipeline::detect"].contains("util::hash"),
        "{:?}",
        g["pipeline::detect"]
    );
    assert!(g["commands::run"].contains("commands::run::task"));
}
