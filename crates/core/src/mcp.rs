//! What an MCP tool call writes, for scope enforcement's deny mode. Claude Code names an
//! MCP tool `mcp__<server>__<tool>`; waymark cannot know every server, so the rule is
//! short: a tool whose name has a word that changes files ([`WRITE_WORDS`]: the official
//! filesystem server's `write_file`, `edit_file`, `create_directory`, `move_file`) writes
//! the paths its input names in [`PATH_FIELDS`] (both `source` and `destination` of a
//! move: the source is removed). An `edit_file` with `dryRun: true` only previews.

use serde_json::Value;

/// The words of a tool's name that make it a write (`write_file`, `createDirectory`).
pub const WRITE_WORDS: &[&str] = &[
    "write", "edit", "create", "move", "rename", "copy", "delete", "remove", "append",
];

/// The input fields that name a path written.
pub const PATH_FIELDS: &[&str] = &[
    "path",
    "paths",
    "file_path",
    "filePath",
    "source",
    "destination",
];

/// The paths an MCP tool call writes, as its input gives them; empty when `tool` is not an
/// MCP tool, or not one that writes.
pub fn written_paths(tool: &str, input: &Value) -> Vec<String> {
    let Some(name) = tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(_, name)| name)
    else {
        return Vec::new();
    };
    let writes = words(name)
        .iter()
        .any(|w| WRITE_WORDS.contains(&w.as_str()));
    if !writes || input.get("dryRun").and_then(Value::as_bool) == Some(true) {
        return Vec::new();
    }
    let strings = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    PATH_FIELDS
        .iter()
        .filter_map(|f| input.get(f))
        .flat_map(strings)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A name's words, lowercase: split at `_`, `-`, `.` and before a capital (`writeFile`).
fn words(name: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in name.chars() {
        if "_-.".contains(c) || (c.is_uppercase() && !out.last().is_some_and(String::is_empty)) {
            out.push(String::new());
        }
        if !"_-.".contains(c) {
            out.last_mut()
                .into_iter()
                .for_each(|w| w.extend(c.to_lowercase()));
        }
    }
    out.retain(|w| !w.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_official_filesystem_servers_writes_name_their_paths() {
        for (tool, input, want) in [
            (
                "mcp__filesystem__write_file",
                json!({"path": "/p/a.rs", "content": "x"}),
                &["/p/a.rs"][..],
            ),
            (
                "mcp__filesystem__edit_file",
                json!({"path": "b.rs", "edits": []}),
                &["b.rs"],
            ),
            (
                "mcp__fs__create_directory",
                json!({"path": "/p/new"}),
                &["/p/new"],
            ),
            (
                "mcp__filesystem__move_file",
                json!({"source": "a", "destination": "b"}),
                &["a", "b"],
            ),
            ("mcp__other__writeFile", json!({"filePath": "c"}), &["c"]),
            (
                "mcp__other__delete_files",
                json!({"paths": ["d", "e"]}),
                &["d", "e"],
            ),
        ] {
            assert_eq!(written_paths(tool, &input), want, "{tool}");
        }
    }

    #[test]
    fn reads_previews_and_other_tools_write_nothing() {
        for (tool, input) in [
            ("mcp__filesystem__read_file", json!({"path": "a"})),
            (
                "mcp__filesystem__read_multiple_files",
                json!({"paths": ["a"]}),
            ),
            ("mcp__filesystem__list_directory", json!({"path": "."})),
            (
                "mcp__filesystem__search_files",
                json!({"path": ".", "pattern": "x"}),
            ),
            (
                "mcp__filesystem__edit_file",
                json!({"path": "a", "dryRun": true}),
            ),
            ("mcp__github__create_issue", json!({"title": "x"})),
            // "rewrite" is not "write": whole words only.
            ("mcp__x__rewrite_query", json!({"path": "a"})),
            ("Write", json!({"path": "a"})),
            ("mcp__filesystem", json!({"path": "a"})),
        ] {
            assert!(written_paths(tool, &input).is_empty(), "{tool}");
        }
    }
}
