//! The house rules of the three crates' sources (`crates/pitchside-core/src`,
//! `crates/pitchside-gateway/src`, `src`; docs/src/architecture.md), checked
//! where Cargo cannot (Cargo already refuses an import from a crate above):
//! - inside a crate, every top-level module is a layer, and non-test code
//!   imports only from layers below its own or from its own folder;
//! - no two files import each other, directly or round a loop;
//! - no file over 400 lines, no function over 80 unless a `// long:` comment
//!   just above it says why.
//!
//! Test code (`tests.rs`, `#[cfg(test)]` modules) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate's source folder and its layers, lowest first. A module may
/// import from layers before its own; the crates below are reached through
/// their re-exports and checked by Cargo, not here.
const CRATES: [(&str, &[&str]); 3] = [
    (
        "crates/pitchside-core/src",
        &["model", "util", "config", "tables", "pipeline"],
    ),
    (
        "crates/pitchside-gateway/src",
        &[
            "mqtt",
            "state",
            "sources",
            "sinks",
            "telemetry",
            "console",
            "daemon",
        ],
    ),
    ("src", &["commands"]),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One crate's modules and layers.
struct Crate {
    src: PathBuf,
    layers: &'static [&'static str],
    modules: BTreeMap<String, PathBuf>,
}

fn crates() -> Vec<Crate> {
    CRATES
        .iter()
        .map(|(dir, layers)| {
            let src = root().join(dir);
            let modules = modules(&src);
            Crate {
                src,
                layers,
                modules,
            }
        })
        .collect()
}

/// Every `.rs` file under `src` but `main.rs` and `lib.rs`, as module paths
/// (`pipeline::decode::json`) → file.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
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
    walk(src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap().with_extension("");
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

/// The file's text without `#[cfg(test)]` items and without comment lines.
fn non_test_code(text: &str) -> String {
    non_test_code_keeping_lines(text)
        .lines()
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

impl Crate {
    fn layer(&self, module: &str) -> usize {
        let top = module.split("::").next().unwrap();
        self.layers
            .iter()
            .position(|l| *l == top)
            .unwrap_or_else(|| {
                panic!(
                    "{}/{top} is not among its crate's layers: place it in tests/house.rs",
                    self.src.display()
                )
            })
    }

    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let known = &self.modules;
        known
            .iter()
            .map(|(m, f)| {
                let text = non_test_code(&std::fs::read_to_string(f).unwrap());
                (m.clone(), imports(m, &text, known))
            })
            .collect()
    }
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for c in crates() {
        for (m, deps) in c.graph() {
            for d in deps {
                let same_folder = m.split("::").next() == d.split("::").next();
                if !same_folder && c.layer(&d) > c.layer(&m) {
                    wrong.push(format!("{}: {m} imports {d}", c.src.display()));
                }
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
    for c in crates() {
        no_loops(&c.graph());
    }
}

fn no_loops(g: &BTreeMap<String, BTreeSet<String>>) {
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
            visit(n, g, &mut colour, &mut Vec::new(), &mut cycles);
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
    let [core, gateway, bin] = &crates()[..] else {
        unreachable!()
    };
    let g = core.graph();
    assert!(
        g["pipeline::window"].contains("util::intern"),
        "{:?}",
        g["pipeline::window"]
    );
    assert!(gateway.graph()["daemon::task"].contains("daemon::batch"));
    assert!(bin.graph()["commands::run"].contains("commands::run::control"));
}

/// Most lines in a source file.
const MAX_FILE_LINES: usize = 400;
/// Most lines in a function, from `fn` to its closing brace.
const MAX_FN_LINES: usize = 80;

/// The text with string, char literal and comment contents blanked (kept
/// the same length, newlines kept), so braces inside them are not counted.
fn blank_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                blank(&mut out, start, end.saturating_sub(close.len()));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    text[i + 2..].find('\'').map(|n| i + 2 + n)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    text[i + 1..].chars().next().and_then(|c| {
                        (text[i + 1 + c.len_utf8()..].starts_with('\''))
                            .then_some(i + 1 + c.len_utf8())
                    })
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i + 1, e);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `(name, first line, lines)` of every function with a body in non-test
/// code, whatever its visibility, and whether a `// long:` comment stands
/// just above it.
fn functions(text: &str) -> Vec<(String, usize, usize, bool)> {
    let original: Vec<&str> = text.lines().collect();
    let code = blank_literals(&non_test_code_keeping_lines(text));
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(rest) = after_fn_keyword(line) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body: from the first `{` after the signature (a `;` first means none).
        let mut depth = 0usize;
        let mut started = false;
        let mut end = None;
        'scan: for (m, l) in lines.iter().enumerate().skip(n) {
            for c in l.chars() {
                match c {
                    ';' if !started => break 'scan,
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' if started => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(m);
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(e) = end {
            let excused = original[..n]
                .iter()
                .rev()
                .take_while(|l| {
                    let l = l.trim_start();
                    l.starts_with("//") || l.starts_with("#[")
                })
                .any(|l| l.trim_start().starts_with("// long:"));
            out.push((name, n + 1, e - n + 1, excused));
        }
    }
    out
}

/// What follows `fn ` when the line declares a function, whatever its
/// visibility (`pub`, `pub(crate)`, `pub(super)`, `pub(in path)`) and
/// qualifiers (`const`, `async`, `unsafe`, `extern "C"`); `line` has its
/// literals blanked.
fn after_fn_keyword(line: &str) -> Option<&str> {
    let mut t = line.trim_start();
    if let Some(rest) = t.strip_prefix("pub") {
        if let Some(inner) = rest.strip_prefix('(') {
            t = &inner[inner.find(')')? + 1..];
        } else if rest.starts_with(' ') {
            t = rest;
        }
    }
    loop {
        t = t.trim_start();
        if let Some(rest) = ["const ", "async ", "unsafe ", "default "]
            .iter()
            .find_map(|q| t.strip_prefix(q))
        {
            t = rest;
        } else if let Some(rest) = t.strip_prefix("extern ") {
            // The ABI's string, blanked: `extern "  "`.
            let rest = rest.trim_start();
            t = match rest.strip_prefix('"') {
                Some(abi) => &abi[abi.find('"')? + 1..],
                None => rest,
            };
        } else {
            break;
        }
    }
    t.strip_prefix("fn ")
}

/// The file's text with every `#[cfg(test)]` item (a module or function:
/// from the attribute to the end of its braces, or to its `;`) turned into
/// blank lines, so line numbers still match the file.
fn non_test_code_keeping_lines(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let code = blank_literals(after);
        let Some(open) = code.find(['{', ';']) else {
            break;
        };
        let mut end = open + 1;
        if code.as_bytes()[open] == b'{' {
            let mut depth = 0;
            for (i, c) in code[open..].char_indices() {
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
        }
        out.extend(after[..end].chars().filter(|&c| c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn no_file_over_400_lines_and_no_function_over_80_without_a_reason() {
    let mut wrong = Vec::new();
    let mut all: Vec<PathBuf> = Vec::new();
    for c in crates() {
        all.extend(c.modules.into_values());
        all.extend(
            ["main.rs", "lib.rs"]
                .map(|f| c.src.join(f))
                .into_iter()
                .filter(|f| f.exists()),
        );
    }
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            wrong.push(format!("{rel}: {n} lines"));
        }
        for (name, line, len, excused) in functions(&text) {
            if len > MAX_FN_LINES && !excused {
                wrong.push(format!("{rel}:{line}: fn {name} is {len} lines"));
            }
        }
    }
    wrong.sort();
    assert!(wrong.is_empty(), "too long:\n{}", wrong.join("\n"));
}

#[test]
fn the_size_checker_sees_every_visibility_and_qualifier() {
    for decl in [
        "fn f() {",
        "pub fn f() {",
        "pub(crate) fn f() {",
        "pub(super) fn f() {",
        "pub(in crate::pipeline) fn f() {",
        "pub(crate) async fn f() {",
        "pub const fn f() {",
        "const unsafe fn f() {",
        "pub(super) async unsafe fn f() {",
        "extern \"C\" fn f() {",
        "pub unsafe extern \"C\" fn f() {",
    ] {
        let text = format!("{decl}\n    x();\n}}\n");
        assert_eq!(functions(&text), [("f".to_string(), 1, 3, false)], "{decl}");
    }
    for not_fn in ["let fn_name = 1;", "pub struct F {", "pub(crate) mod f {"] {
        assert!(after_fn_keyword(not_fn).is_none(), "{not_fn}");
    }
}

#[test]
fn the_size_checker_measures_bodies_not_strings() {
    let text = "fn a() {\n    let s = \"}}}\";\n    let c = '}';\n}\n// long: a table\nfn b<'x>(v: &'x str) {\n    // }\n}\nfn c();\n#[cfg(test)]\nmod tests {\n    fn d() {}\n}\n";
    let f = functions(text);
    assert_eq!(
        f,
        [
            ("a".to_string(), 1, 4, false),
            ("b".to_string(), 6, 3, true)
        ]
    );
}
