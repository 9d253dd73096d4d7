//! The crate's layers (see `docs/architecture.md`): every `crate::` path in
//! `src/` points to its own layer or one below it, no two modules import
//! each other, even through others, and no function is longer than 150
//! lines.
//!
//! Read from the sources as text: comments are skipped, and `super::` paths
//! (a module and its parent) are not followed.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::sources;

/// The layers, lowest first: a module may use its own layer and those
/// before it. A top-level module not listed fails the test.
const LAYERS: &[&[&str]] = &[
    // Pure functions on slices.
    &["kernels"],
    // Components, resources, hooks.
    &["data"],
    // `SolverState` and its stages.
    &["solver"],
    // The step, the substep query, interpolation and the fixed schedules'
    // executors.
    &["step", "substep", "interpolation", "executors"],
    // The public modules, which re-export the layers below.
    &[
        "body",
        "constraints",
        "diagnostics",
        "forces",
        "islands",
        "obstacles",
        "origin",
        "spring",
        "prelude",
    ],
    // Features.
    &[
        "debug_ui",
        "integrators",
        "model",
        "pins",
        "rollback",
        "ropes",
        "snapshot",
        "soft_mesh",
    ],
    // The plugin, which wires the layers below into an app (and registers
    // the snapshot's types).
    &["plugin"],
];

/// The module path of a file: `src/solver/rebuild/mod.rs` → `solver::rebuild`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file below src/");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|last| last == "mod" || last == "lib")
    {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments (line, doc and block comments)
/// and with its string and character literals emptied, so that neither a
/// `crate::` nor a brace in them counts.
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        match (c, next) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        // Newlines stay, so that line counts hold.
                        if chars[i] == '\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
            }
            ('"', _) => {
                out.push('"');
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'\n') {
                        out.push('\n');
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            // A character literal ('x', '\n', '\u{..}'); a lifetime ('a)
            // has no closing quote right after its name.
            ('\'', Some(_)) if chars.get(i + 2) == Some(&'\'') || next == Some('\\') => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push_str("' '");
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The module paths a file's code names with `crate::`, each cut to the
/// longest prefix that is a module of `modules` (`use crate::{a, b::c}`
/// names `a` and `b::c`).
fn imports(code: &str, modules: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let paths: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
            // One level of braces: `crate::{a::b, c}`.
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            group[..end]
                .split(',')
                .map(|p| p.trim().to_string())
                .collect()
        } else {
            vec![rest.to_string()]
        };
        for path in paths {
            let segments: Vec<String> = path
                .split("::")
                .map(|s| {
                    s.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .take_while(|s| !s.is_empty())
                .collect();
            let longest = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].to_vec())
                .find(|prefix| modules.contains(prefix));
            // An item of the crate root (`crate::EulerPhysicsPlugin`) is
            // the root's: a re-export, which the layer check reads by name.
            found.push(longest.unwrap_or_else(|| segments[..1.min(segments.len())].to_vec()));
        }
    }
    found
}

/// The layer of a module path, by its first segment.
fn layer(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
}

struct Crate {
    /// Module path → its code (comments removed).
    code: BTreeMap<Vec<String>, String>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let code = files
        .iter()
        .map(|file| {
            let text = fs::read_to_string(file).expect("a readable source file");
            (module_of(&src, file), code(&text))
        })
        .collect();
    Crate { code }
}

impl Crate {
    fn modules(&self) -> Vec<Vec<String>> {
        self.code.keys().cloned().collect()
    }

    /// Module → the other modules it names.
    fn edges(&self) -> BTreeMap<Vec<String>, Vec<Vec<String>>> {
        let modules = self.modules();
        self.code
            .iter()
            .map(|(module, code)| {
                let mut to: Vec<Vec<String>> = imports(code, &modules)
                    .into_iter()
                    .filter(|target| target != module && modules.contains(target))
                    .collect();
                to.sort();
                to.dedup();
                (module.clone(), to)
            })
            .collect()
    }
}

#[test]
fn every_crate_path_points_to_its_own_layer_or_below() {
    let krate = read_crate();
    let modules = krate.modules();
    let features = LAYERS
        .iter()
        .position(|layer| layer.contains(&"snapshot"))
        .expect("a layer of features");
    let mut wrong = Vec::new();
    for (module, code) in &krate.code {
        if module.is_empty() {
            // The crate root declares and re-exports everything.
            continue;
        }
        let Some(own) = layer(module) else {
            wrong.push(format!("{} is in no layer", module.join("::")));
            continue;
        };
        for target in imports(code, &modules) {
            match layer(&target) {
                Some(to) if to <= own => {}
                // Names at the crate root are re-exports of the public
                // modules, for the features (and the plugin) only.
                None if own >= features => {}
                _ => wrong.push(format!(
                    "{} (layer {own}) uses crate::{}",
                    module.join("::"),
                    target.join("::")
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports pointing up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_module_imports_itself_through_others() {
    let edges = Crate::edges(&read_crate());
    // Depth-first search; a module reached again while on the path closes
    // a cycle.
    fn visit(
        at: &Vec<String>,
        edges: &BTreeMap<Vec<String>, Vec<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut Vec<Vec<String>>,
        cycles: &mut Vec<String>,
    ) {
        if done.contains(at) {
            return;
        }
        if let Some(start) = path.iter().position(|m| m == at) {
            let names: Vec<String> = path[start..].iter().map(|m| m.join("::")).collect();
            cycles.push(format!("{} -> {}", names.join(" -> "), at.join("::")));
            return;
        }
        path.push(at.clone());
        for next in edges.get(at).into_iter().flatten() {
            visit(next, edges, path, done, cycles);
        }
        path.pop();
        done.push(at.clone());
    }
    let mut cycles = Vec::new();
    let mut done = Vec::new();
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let krate = read_crate();
    let mut long = Vec::new();
    for (module, code) in &krate.code {
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            let is_fn = trimmed.starts_with("fn ")
                || trimmed.contains(" fn ") && !trimmed.contains("=>") && !trimmed.contains('|');
            if !is_fn {
                continue;
            }
            // The body: from the first `{` at or after the signature to the
            // brace that closes it.
            let mut depth = 0i32;
            let mut opened = false;
            let mut end = None;
            for (j, text) in lines.iter().enumerate().skip(i) {
                if !opened && text.trim_end().ends_with(';') && !text.contains('{') {
                    // A declaration without a body (a trait's).
                    break;
                }
                for c in text.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if opened && depth <= 0 {
                    end = Some(j);
                    break;
                }
            }
            if let Some(end) = end
                && end - i + 1 > 150
            {
                long.push(format!(
                    "{}: `fn {}` is {} lines",
                    module.join("::"),
                    trimmed
                        .split("fn ")
                        .nth(1)
                        .and_then(|name| name.split(['(', '<']).next())
                        .unwrap_or(trimmed),
                    end - i + 1
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 150 lines:\n{}",
        long.join("\n")
    );
}
