//! Tool inputs and responses of the tools waymark acts on, typed; everything else kept raw.
//!
//! A typed model that does not fit (a field of the wrong type, say) falls back to the raw
//! JSON instead of failing the event: waymark must keep working when Claude Code changes a
//! tool's shape.

use serde::Deserialize;
use serde_json::Value;
use waymark_core::shell;
use waymark_core::shell::writes::{Target, Writes};

/// A tool call as carried by PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied.
#[derive(Debug, Clone, Default)]
pub struct ToolCall {
    pub name: String,
    pub tool_use_id: Option<String>,
    pub input: ToolInput,
}

#[derive(Debug, Clone, Default)]
pub enum ToolInput {
    Write(WriteInput),
    Edit(EditInput),
    NotebookEdit(NotebookEditInput),
    Bash(BashInput),
    TaskCreate(TaskCreateInput),
    TaskUpdate(TaskUpdateInput),
    TodoWrite(TodoWriteInput),
    /// Codex CLI's `apply_patch` (never sent by Claude Code).
    Patch(PatchInput),
    Other(Value),
    #[default]
    Missing,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WriteInput {
    pub file_path: String,
    pub content: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EditInput {
    pub file_path: String,
    pub old_string: String,
    pub new_string: String,
    pub replace_all: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NotebookEditInput {
    pub notebook_path: String,
    pub new_source: String,
    pub cell_id: Option<String>,
    pub edit_mode: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BashInput {
    pub command: String,
    pub description: Option<String>,
    pub run_in_background: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskCreateInput {
    pub subject: String,
    pub description: String,
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskUpdateInput {
    #[serde(rename = "taskId", deserialize_with = "string_or_number")]
    pub task_id: String,
    pub status: Option<String>,
    pub subject: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TodoWriteInput {
    pub todos: Vec<Todo>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Todo {
    pub content: String,
    pub status: String,
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
    pub id: Option<String>,
}

/// A Codex CLI `apply_patch` call: the patch text (its `tool_input.command`) and the
/// files its headers name (`*** Add File:`, `*** Update File:`, `*** Delete File:`, and
/// the new name of a `*** Move to:`), as written: relative to the event's cwd.
#[derive(Debug, Clone, Default)]
pub struct PatchInput {
    pub patch: String,
    pub files: Vec<PatchFile>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    pub path: String,
    pub op: PatchOp,
}

pub use waymark_core::shell::patch::PatchOp;

impl PatchInput {
    /// Reads the file headers of a patch in Codex's format (`*** Begin Patch` …), as
    /// Codex's parser does (`waymark_core::shell::patch`).
    pub fn parse(patch: &str) -> PatchInput {
        let files = waymark_core::shell::patch::files(patch)
            .into_iter()
            .map(|(path, op)| PatchFile { path, op })
            .collect();
        PatchInput {
            patch: patch.to_string(),
            files,
        }
    }

    /// The content an added file gets (its `+` lines), for the trace's ranges: the same
    /// lines, and so the same hash, as a Write of that file would give.
    pub fn added_content(&self, path: &str) -> Option<String> {
        let header = format!("*** Add File: {path}");
        let mut lines = self.patch.lines().skip_while(|l| l.trim() != header);
        lines.next()?;
        let added = lines.map_while(|l| l.strip_prefix('+'));
        Some(added.map(|l| format!("{l}\n")).collect())
    }
}

/// A PostToolUse `tool_response`, typed for the tools waymark reads.
#[derive(Debug, Clone, Default)]
pub enum ToolResponse {
    Write(FileChange),
    Edit(FileChange),
    Bash(BashResponse),
    TaskCreate(TaskCreateResponse),
    TaskUpdate(TaskUpdateResponse),
    Other(Value),
    #[default]
    Missing,
}

/// What Write and Edit report: the path, the new content (Write) and the diff hunks.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FileChange {
    #[serde(rename = "filePath")]
    pub file_path: String,
    /// `create` or `update` for Write.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub content: Option<String>,
    #[serde(rename = "structuredPatch")]
    pub structured_patch: Vec<Hunk>,
}

pub use waymark_core::trace::ranges::Hunk;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BashResponse {
    pub stdout: String,
    pub stderr: String,
    pub interrupted: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskCreateResponse {
    pub task: CreatedTask,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CreatedTask {
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    pub subject: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskUpdateResponse {
    pub success: bool,
    #[serde(rename = "taskId", deserialize_with = "string_or_number")]
    pub task_id: String,
    #[serde(rename = "statusChange")]
    pub status_change: Option<StatusChange>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StatusChange {
    pub from: String,
    pub to: String,
}

/// Task ids are strings in Claude Code 2.1; accept numbers too.
fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    })
}

fn typed<T: for<'de> Deserialize<'de>>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

impl ToolCall {
    /// Takes `tool_name`, `tool_use_id` and `tool_input` out of a hook payload.
    pub fn from_payload(payload: &mut Value) -> ToolCall {
        let name = String::from(payload["tool_name"].as_str().unwrap_or(""));
        let tool_use_id = payload["tool_use_id"].as_str().map(str::to_string);
        let input = match payload.get_mut("tool_input").map(Value::take) {
            None | Some(Value::Null) => ToolInput::Missing,
            Some(raw) => ToolInput::typed(&name, raw),
        };
        ToolCall {
            name,
            tool_use_id,
            input,
        }
    }

    /// Paths this call writes, as given (absolute or relative to the event's cwd).
    pub fn written_paths(&self) -> Vec<&str> {
        match &self.input {
            ToolInput::Write(w) => vec![w.file_path.as_str()],
            ToolInput::Edit(e) => vec![e.file_path.as_str()],
            ToolInput::NotebookEdit(n) => vec![n.notebook_path.as_str()],
            ToolInput::Patch(p) => p.files.iter().map(|f| f.path.as_str()).collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect()
    }

    /// What this call writes, for scope enforcement: a Write's, Edit's or NotebookEdit's
    /// path, an MCP write's paths (`waymark_core::mcp`), what a Bash command names
    /// (`waymark_core::shell::writes`, with what it cannot name). Other tools: nothing.
    pub fn writes(&self) -> Writes {
        let paths = match &self.input {
            ToolInput::Bash(b) => return shell::writes::of(&b.command),
            ToolInput::Other(input) => return waymark_core::mcp::writes(&self.name, input),
            _ => self.written_paths(),
        };
        let targets = paths.into_iter().map(|p| Target {
            path: p.to_string(),
            in_dir: None,
        });
        Writes {
            targets: targets.collect(),
            ..Writes::default()
        }
    }

    /// True for the tools that change files (the mutation classes of the trace).
    pub fn is_mutation(&self) -> bool {
        matches!(
            self.input,
            ToolInput::Write(_)
                | ToolInput::Edit(_)
                | ToolInput::NotebookEdit(_)
                | ToolInput::Patch(_)
        )
    }

    /// The call as a person names it: ``Bash `cargo test` ``, `Write /p/src/a.rs`, or the
    /// tool's name.
    pub fn describe(&self) -> String {
        if let Some(command) = self.command() {
            return format!("{} `{command}`", self.name);
        }
        match self.written_paths().first() {
            Some(path) => format!("{} {path}", self.name),
            None => self.name.clone(),
        }
    }

    /// Whether running the call may change the project's files: every tool but those
    /// known only to read or to talk (a tool unknown here may write).
    pub fn may_change_files(&self) -> bool {
        const READ_ONLY: &[&str] = &[
            "Read",
            "Glob",
            "Grep",
            "LS",
            "NotebookRead",
            "WebFetch",
            "WebSearch",
            "ToolSearch",
            "TaskCreate",
            "TaskUpdate",
            "TaskGet",
            "TaskList",
            "TodoWrite",
            "ListAgents",
            "ExitPlanMode",
            "ReportFindings",
        ];
        !READ_ONLY.contains(&self.name.as_str())
    }

    /// The Bash command, when this is a Bash call.
    pub fn command(&self) -> Option<&str> {
        match &self.input {
            ToolInput::Bash(b) => Some(&b.command),
            _ => None,
        }
    }
}

impl ToolInput {
    fn typed(tool: &str, raw: Value) -> ToolInput {
        let parsed = match tool {
            "Write" => typed(&raw).map(ToolInput::Write),
            "Edit" => typed(&raw).map(ToolInput::Edit),
            "NotebookEdit" => typed(&raw).map(ToolInput::NotebookEdit),
            "Bash" => typed(&raw).map(ToolInput::Bash),
            "TaskCreate" => typed(&raw).map(ToolInput::TaskCreate),
            "TaskUpdate" => typed(&raw).map(ToolInput::TaskUpdate),
            "TodoWrite" => typed(&raw).map(ToolInput::TodoWrite),
            "apply_patch" => raw["command"]
                .as_str()
                .map(|p| ToolInput::Patch(PatchInput::parse(p))),
            _ => None,
        };
        parsed.unwrap_or(ToolInput::Other(raw))
    }
}

impl ToolResponse {
    /// Takes `tool_response` out of a PostToolUse payload, typed by the call's tool.
    pub fn from_payload(call: &ToolCall, payload: &mut Value) -> ToolResponse {
        let raw = match payload.get_mut("tool_response").map(Value::take) {
            None | Some(Value::Null) => return ToolResponse::Missing,
            Some(raw) => raw,
        };
        let parsed = match call.name.as_str() {
            "Write" => typed(&raw).map(ToolResponse::Write),
            "Edit" => typed(&raw).map(ToolResponse::Edit),
            "Bash" => typed(&raw).map(ToolResponse::Bash),
            "TaskCreate" => typed(&raw).map(ToolResponse::TaskCreate),
            "TaskUpdate" => typed(&raw).map(ToolResponse::TaskUpdate),
            _ => None,
        };
        parsed.unwrap_or(ToolResponse::Other(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_and_raw_inputs() {
        let mut p = json!({"tool_name":"Write","tool_input":{"file_path":"/p/a","content":"x"}});
        let call = ToolCall::from_payload(&mut p);
        assert_eq!(call.written_paths(), vec!["/p/a"]);
        let mut p = json!({"tool_name":"Grep","tool_input":{"pattern":"x"}});
        assert!(matches!(
            ToolCall::from_payload(&mut p).input,
            ToolInput::Other(_)
        ));
    }

    /// What scope enforcement judges: a Write's path, an MCP write's paths, a Bash
    /// command's targets; a read writes nothing.
    #[test]
    fn writes_of_each_kind_of_call() {
        let paths = |mut p: Value| {
            let w = ToolCall::from_payload(&mut p).writes();
            (
                w.targets.into_iter().map(|t| t.path).collect::<Vec<_>>(),
                w.unreadable.len(),
            )
        };
        let write = json!({"tool_name":"Write","tool_input":{"file_path":"/p/a","content":"x"}});
        assert_eq!(paths(write), (vec!["/p/a".to_string()], 0));
        let mcp = json!({"tool_name":"mcp__filesystem__move_file","tool_input":{"source":"a","destination":"b"}});
        assert_eq!(paths(mcp), (vec!["a".to_string(), "b".into()], 0));
        let bash =
            json!({"tool_name":"Bash","tool_input":{"command":"echo x > f; echo y > \"$O\""}});
        assert_eq!(paths(bash), (vec!["f".to_string()], 1));
        let read = json!({"tool_name":"Read","tool_input":{"file_path":"/p/a"}});
        assert_eq!(paths(read), (vec![], 0));
    }

    #[test]
    fn wrong_typed_input_falls_back_to_raw() {
        let mut p = json!({"tool_name":"Write","tool_input":{"file_path":7}});
        assert!(matches!(
            ToolCall::from_payload(&mut p).input,
            ToolInput::Other(_)
        ));
    }

    #[test]
    fn a_codex_patch_names_its_files() {
        let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+fn a() {}\n+fn b() {}\n*** Update File: src/old.rs\n*** Move to: src/renamed.rs\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\n";
        let mut p = json!({"tool_name":"apply_patch","tool_input":{"command":patch}});
        let call = ToolCall::from_payload(&mut p);
        assert!(call.is_mutation());
        assert_eq!(
            call.written_paths(),
            vec!["src/new.rs", "src/old.rs", "src/renamed.rs", "gone.txt"]
        );
        let ToolInput::Patch(input) = &call.input else {
            panic!("{call:?}")
        };
        assert_eq!(input.files[2].op, PatchOp::MoveTo);
        let added = input.added_content("src/new.rs");
        assert_eq!(added.as_deref(), Some("fn a() {}\nfn b() {}\n"));
        assert_eq!(input.added_content("src/old.rs"), None);
    }

    #[test]
    fn task_ids_as_numbers() {
        let mut p =
            json!({"tool_name":"TaskUpdate","tool_input":{"taskId":3,"status":"completed"}});
        match ToolCall::from_payload(&mut p).input {
            ToolInput::TaskUpdate(t) => assert_eq!(t.task_id, "3"),
            other => panic!("{other:?}"),
        }
    }
}
