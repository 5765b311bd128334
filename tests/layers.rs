//! The application's rooms form no import cycle (docs/design.md, Layers): a room's code
//! (its tests aside) names only rooms below it. The crates are layers the compiler keeps;
//! this test keeps the rooms of the application crate in order the same way.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Each top-level module of `src/` and the other top-level modules its code names
/// (`crate::<room>`), unit-test modules left out.
fn rooms() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names: BTreeSet<String> = fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension()? == "rs").then_some(name)
        })
        .filter(|n| n != "lib" && n != "main")
        .collect();
    let mut uses = BTreeMap::new();
    for room in &names {
        let mut files = Vec::new();
        collect(&src.join(room), &mut files);
        collect(&src.join(format!("{room}.rs")), &mut files);
        let named: BTreeSet<String> = files
            .iter()
            .flat_map(|f| mentions(&fs::read_to_string(f).unwrap()))
            .filter(|n| names.contains(n) && n != room)
            .collect();
        uses.insert(room.clone(), named);
    }
    uses
}

fn collect(path: &Path, files: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for e in fs::read_dir(path).unwrap() {
            collect(&e.unwrap().path(), files);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        files.push(path.to_path_buf());
    }
}

/// The rooms a file's code names as `crate::<room>`, up to its unit tests.
fn mentions(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    code.match_indices("crate::")
        .map(|(i, _)| {
            code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_room_names_a_room_that_names_it_back() {
    let uses = rooms();
    assert!(uses.len() <= 12, "{} rooms: {:?}", uses.len(), uses.keys());
    // Depth-first search for a cycle, reporting the rooms on it.
    fn visit<'a>(
        room: &'a str,
        uses: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|r| *r == room) {
            panic!("an import cycle: {} -> {room}", path[at..].join(" -> "));
        }
        if !done.insert(room) {
            return;
        }
        path.push(room);
        for next in &uses[room] {
            visit(next, uses, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for room in uses.keys() {
        visit(room, &uses, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_store_is_the_bottom_room_and_the_command_line_the_top() {
    let uses = rooms();
    assert!(uses["store"].is_empty(), "store names {:?}", uses["store"]);
    assert!(
        uses.values().all(|named| !named.contains("cmd")),
        "nothing names the command line"
    );
}

/// The sibling modules a file's code names (`super::name`, `super::{a, b}`, or
/// `crate::<dir's module path>::name`), up to its unit tests.
fn siblings_named(code: &str, module: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or(code);
    // Comments (a doc link to a sibling) name nothing the code uses.
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let code = code.as_str();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut named = BTreeSet::new();
    let mut prefixes = vec!["super::".to_string()];
    if !module.is_empty() {
        prefixes.push(format!("crate::{module}::"));
    }
    for prefix in &prefixes {
        for (i, _) in code.match_indices(prefix.as_str()) {
            let rest = &code[i + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(list) => {
                    let list = &list[..list.find('}').unwrap_or(list.len())];
                    named.extend(list.split(',').map(|w| ident(w.trim())));
                }
                None => {
                    named.insert(ident(rest));
                }
            }
        }
    }
    named.retain(|n| siblings.contains(n));
    named
}

/// Each source directory's files: module name → the sibling modules it names.
fn files_in(dir: &Path, module: &str, out: &mut Vec<(String, BTreeMap<String, BTreeSet<String>>)>) {
    let entries: Vec<std::path::PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let files: Vec<&std::path::PathBuf> = entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    let names: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.file_stem()?.to_str().map(str::to_string))
        .filter(|n| n != "mod" && n != "lib" && n != "main")
        .collect();
    let mut uses = BTreeMap::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap().to_string();
        if !names.contains(&name) {
            continue;
        }
        let code = fs::read_to_string(f).unwrap();
        let mut named = siblings_named(&code, module, &names);
        named.remove(&name);
        uses.insert(name, named);
    }
    out.push((dir.display().to_string(), uses));
    for sub in entries.iter().filter(|p| p.is_dir()) {
        let leaf = sub.file_name().unwrap().to_str().unwrap();
        let module = match module {
            "" => leaf.to_string(),
            m => format!("{m}::{leaf}"),
        };
        files_in(sub, &module, out);
    }
}

/// Issue 45: no two files of a directory import each other (`config/table` and
/// `config/value`, `task/bounds` and `task/plan`, `task/capture` and `task/store` did):
/// each pair of modules has one direction.
#[test]
fn no_two_files_name_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = Vec::new();
    for src in ["src", "crates/core/src", "crates/redact/src"] {
        files_in(&root.join(src), "", &mut dirs);
    }
    let mut circles = Vec::new();
    for (dir, uses) in &dirs {
        for (a, named) in uses {
            for b in named.iter().filter(|b| a < *b) {
                if uses.get(b).is_some_and(|back| back.contains(a)) {
                    circles.push(format!("{dir}: {a} <-> {b}"));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other:\n{}",
        circles.join("\n")
    );
}

/// The non-test lines the design allows (docs/design.md, Budgets): what a round adds,
/// another part gives back.
const LINE_BUDGET: usize = 30_000;

/// The non-test lines of a file: every line (code, comments, blanks) up to its inline
/// test module. Test-only files (`tests.rs`, `testing.rs`, `sequences.rs`, a `tests/`
/// folder) count nothing.
fn non_test_lines(path: &Path) -> usize {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if ["tests.rs", "testing.rs", "sequences.rs"].contains(&name) {
        return 0;
    }
    let text = fs::read_to_string(path).unwrap();
    let inline_tests = text
        .match_indices("#[cfg(test)]\nmod ")
        .find(|(at, opener)| {
            let rest = &text[at + opener.len()..];
            let name = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'));
            name.is_some_and(|end| rest[end..].starts_with(" {"))
        });
    text[..inline_tests.map_or(text.len(), |(at, _)| at)]
        .lines()
        .count()
}

/// Issue 52, item 6: the code of `src/` and every crate's `src/` stays within the budget.
#[test]
fn the_code_stays_within_its_line_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut srcs = vec![root.join("src")];
    for e in fs::read_dir(root.join("crates")).unwrap() {
        srcs.push(e.unwrap().path().join("src"));
    }
    let mut files = Vec::new();
    for src in &srcs {
        collect(src, &mut files);
    }
    let tests_dir = |f: &Path| f.components().any(|c| c.as_os_str() == "tests");
    let lines: usize = files
        .iter()
        .filter(|f| !tests_dir(f.strip_prefix(root).unwrap()))
        .map(|f| non_test_lines(f))
        .sum();
    assert!(
        lines <= LINE_BUDGET,
        "{lines} non-test lines, over the budget of {LINE_BUDGET}"
    );
}
