//! The top-level modules form a chain: each uses only the modules before it in the order that
//! docs/architecture.md gives under "Module order". This test reads that order from the document
//! (so the document and the code cannot drift apart) and fails on any `crate::<module>` path in
//! library code that points forward. Test code (`#[cfg(test)]` items, `*_tests.rs` files) may
//! use any module: the routing tests, for example, build algorithms through the registry above
//! them, as users do.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const ORDER_MARKER: &str = "Module order:";

/// The documented order: the indented line after the marker, module names joined by arrows.
fn documented_order() -> Vec<String> {
    let doc = fs::read_to_string("docs/architecture.md").expect("docs/architecture.md");
    let after = doc
        .split_once(ORDER_MARKER)
        .unwrap_or_else(|| panic!("docs/architecture.md has no `{ORDER_MARKER}` line"))
        .1;
    let line = after
        .lines()
        .map(str::trim)
        .find(|l| l.contains('→'))
        .expect("the module order line (names joined by →)");
    line.split('→').map(|m| m.trim().to_string()).collect()
}

/// Top-level modules: the folders and files of `src/` other than the crate roots.
fn modules() -> BTreeSet<String> {
    fs::read_dir("src")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_str()?.to_string();
            let is_module = p.is_dir() || p.extension().is_some_and(|e| e == "rs");
            (is_module && name != "lib" && name != "main").then_some(name)
        })
        .collect()
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_str().unwrap();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// The file's lines with `#[cfg(test)]` items and comment lines removed, numbered from 1.
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed == "#[cfg(test)]" {
            // Skip the item: up to a `;` ending a one-line item, or until its braces close.
            let mut depth = 0i64;
            let mut opened = false;
            for (_, item) in lines.by_ref() {
                let t = item.trim();
                if t.starts_with("#[") {
                    continue;
                }
                depth += t.matches('{').count() as i64 - t.matches('}').count() as i64;
                opened |= t.contains('{');
                if (opened && depth <= 0) || (!opened && t.ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push((i + 1, line));
    }
    out
}

/// The top-level modules a line names through `crate::`, including `crate::{a, b::c}` groups.
fn referenced(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            found.push(item);
        } else {
            found.push(after.to_string());
        }
        rest = after;
    }
    found
        .iter()
        .map(|path| {
            path.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|m| !m.is_empty())
        .collect()
}

#[test]
fn modules_use_only_the_modules_before_them() {
    let order = documented_order();
    let present = modules();
    let listed: BTreeSet<String> = order.iter().cloned().collect();
    assert_eq!(
        present, listed,
        "docs/architecture.md's module order must list every module of src/ exactly once"
    );
    assert_eq!(listed.len(), order.len(), "a module is listed twice");
    let rank = |m: &str| order.iter().position(|o| o == m);

    let mut violations = Vec::new();
    for (index, module) in order.iter().enumerate() {
        let mut files = Vec::new();
        let dir = Path::new("src").join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(Path::new("src").join(format!("{module}.rs")));
        }
        for file in files.iter().filter(|f| !is_test_file(f)) {
            let text = fs::read_to_string(file).unwrap();
            for (n, line) in library_lines(&text) {
                for used in referenced(line) {
                    if let Some(r) = rank(&used)
                        && r > index
                    {
                        violations.push(format!(
                            "{}:{n}: `{module}` uses `{used}`, which comes after it",
                            file.display()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "modules used against the order of docs/architecture.md:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_checker_sees_grouped_and_plain_paths_and_skips_tests() {
    assert_eq!(referenced("use crate::routing::X;"), ["routing"]);
    assert_eq!(
        referenced("use crate::{error::Error, sim::{A, B}, topology};"),
        ["error", "sim", "topology"]
    );
    assert_eq!(
        referenced("let x = crate::search::run(crate::sim::y);"),
        ["search", "sim"]
    );
    let text = "use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nuse crate::d;\n#[cfg(test)]\nuse crate::e;\n";
    let seen: Vec<_> = library_lines(text)
        .iter()
        .flat_map(|(_, l)| referenced(l))
        .collect();
    assert_eq!(seen, ["a", "d"]);
}
