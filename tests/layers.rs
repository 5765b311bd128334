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
