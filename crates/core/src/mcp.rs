//! What an MCP tool call writes, for scope enforcement's deny mode. Claude Code names an
//! MCP tool `mcp__<server>__<tool>`; waymark cannot know every server, so the rule is
//! short: a tool whose name has a word that changes files ([`WRITE_WORDS`]: the official
//! filesystem server's `write_file`, `edit_file`, `create_directory`, `move_file`) writes
//! the paths its input names in [`PATH_FIELDS`] (both `source` and `destination` of a
//! move: the source is removed). An `edit_file` with `dryRun: true` only previews. For deny
//! mode ([`writes`]) a command line in its input is read as Bash's is, and a path given to
//! a tool whose name says neither that it writes nor that it only looks ([`READ_WORDS`])
//! is a write that cannot be judged: asked about.

use serde_json::Value;

use crate::shell::writes::{Target, Writes};

/// The words of a tool's name that make it a write (`write_file`, `createDirectory`).
const WRITE_WORDS: &[&str] = &[
    "write", "edit", "create", "move", "rename", "copy", "delete", "remove", "append", "push",
    "update", "upload", "put",
];

/// The input fields that name a path written.
const PATH_FIELDS: &[&str] = &[
    "path",
    "paths",
    "file_path",
    "filePath",
    "source",
    "destination",
];

/// The words of a tool's name that make it only look (`read_file`, `list_directory`).
const READ_WORDS: &[&str] = &[
    "read", "get", "list", "search", "find", "view", "show", "stat", "info", "query", "fetch",
    "describe", "diff", "status", "log", "grep", "glob", "tree", "count",
];

/// The input fields that hold a shell command line an MCP tool runs.
const COMMAND_FIELDS: &[&str] = &["command", "cmd", "script", "shell_command"];

/// What an MCP tool call writes, for deny mode: the paths its input names when the tool
/// writes (not with `dryRun: true`, which only previews); what a command line in its input
/// writes ([`COMMAND_FIELDS`], read as a Bash command is); and a path given to a tool
/// waymark does not know (no word of its name says it writes or only looks) is a write it
/// cannot judge, asked about.
pub fn writes(tool: &str, input: &Value) -> Writes {
    let Some(name) = mcp_name(tool) else {
        return Writes::default();
    };
    let mut out = Writes::default();
    for command in COMMAND_FIELDS.iter().filter_map(|f| input.get(f)?.as_str()) {
        let w = crate::shell::writes::of(command);
        out.targets.extend(w.targets);
        out.unreadable.extend(w.unreadable);
    }
    let said = words(name);
    let says = |list: &[&str]| said.iter().any(|w| list.contains(&w.as_str()));
    if !says(READ_WORDS) && !says(WRITE_WORDS) {
        for p in paths(input) {
            out.unreadable.push(format!(
                "the MCP tool `{tool}`, which waymark does not know, is given `{p}`: it may write there"
            ));
        }
    }
    let dry_run = input.get("dryRun").and_then(Value::as_bool) == Some(true);
    if says(WRITE_WORDS) && !dry_run {
        let written = paths(input).into_iter();
        out.targets
            .extend(written.map(|path| Target { path, in_dir: None }));
    }
    out
}

/// The tool's own name in `mcp__<server>__<tool>`, for an MCP tool.
fn mcp_name(tool: &str) -> Option<&str> {
    tool.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(_, name)| name)
}

/// The paths an input names in [`PATH_FIELDS`].
fn paths(input: &Value) -> Vec<String> {
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
    // The files a list of them names, each an object naming its path (`push_files`'
    // `files: [{path, content}]`).
    let listed = input
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|file| {
            PATH_FIELDS
                .iter()
                .filter_map(|f| file.get(f))
                .flat_map(strings)
                .collect::<Vec<_>>()
        });
    PATH_FIELDS
        .iter()
        .filter_map(|f| input.get(f))
        .flat_map(strings)
        .chain(listed)
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

    /// The paths a call writes by its input's path fields, as deny mode is told them.
    fn written_paths(tool: &str, input: &Value) -> Vec<String> {
        writes(tool, input)
            .targets
            .into_iter()
            .map(|t| t.path)
            .collect()
    }

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

    /// A tool that writes files by path elsewhere (a remote repository's `push_files`,
    /// `files[].path`) is judged like a write here (issue 50, item 6).
    #[test]
    fn a_list_of_files_pushed_names_each_path() {
        let w = writes(
            "mcp__github__push_files",
            &json!({"owner": "o", "repo": "r", "branch": "main", "message": "m",
                    "files": [{"path": "src/a.rs", "content": "x"}, {"path": ".github/workflows/ci.yml", "content": "y"}]}),
        );
        let paths: Vec<&str> = w.targets.iter().map(|t| t.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", ".github/workflows/ci.yml"]);
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
