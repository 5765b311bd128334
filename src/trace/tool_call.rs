//! The ledger record of one tool call: a mutation with the files and line ranges it wrote,
//! a command with its exit code and output tail, or a tool that failed.

use super::{Waymark, kind, ranges};
use crate::claude::event::{Event, ToolFailure};
use crate::claude::tool::{PatchOp, ToolCall, ToolInput, ToolResponse};
use crate::runtime::context::Ctx;
use crate::store::project::Located;
use waymark_core::text::{tail, truncate};

/// Commands and errors copied into the ledger are cut to this many characters.
const MAX_TEXT: usize = 2000;

/// What a finished tool call did, as the post-hooks see it.
pub struct Outcome<'a> {
    pub event: &'a Event,
    pub call: &'a ToolCall,
    pub response: Option<&'a ToolResponse>,
    pub failure: Option<&'a ToolFailure>,
    /// Paths the call wrote, located against the root.
    pub paths: &'a [Located],
    /// Bash: the exit code, the redacted and bounded output tail, whether it validated.
    pub exit_code: Option<i32>,
    pub output_tail: &'a str,
    pub validation: bool,
}

/// Appends the record of the tool call, attributed to `about` and `intent_id`.
pub fn record(
    ctx: &Ctx,
    t: &Outcome,
    about: &Waymark,
    intent_id: Option<String>,
) -> anyhow::Result<()> {
    let mutation = t.call.is_mutation();
    let mut wm = Waymark {
        kind: if t.failure.is_some() && mutation {
            kind::TOOL_FAILURE.into()
        } else if mutation {
            kind::MUTATION.into()
        } else {
            kind::BASH.into()
        },
        intent_id,
        ..about.clone()
    };
    if let Some(cmd) = t.call.command() {
        wm.command = Some(truncate(cmd, MAX_TEXT));
        wm.exit_code = t.exit_code;
        wm.output_tail = Some(t.output_tail.to_string()).filter(|s| !s.is_empty());
        wm.validation = t.validation.then_some(true);
    } else if let Some(f) = t.failure {
        wm.output_tail = Some(tail(f.error.trim(), MAX_TEXT));
    }
    let mut record = super::record(&ctx.project, ctx.now, wm);
    if mutation && t.failure.is_none() {
        let (class, ranges) = attributed_lines(t.call, t.response);
        let waymark = &mut record.metadata.as_mut().expect("set by new").waymark;
        waymark.mutation_class = Some(class.into());
        for loc in t.paths {
            if let Located::Outside(p) = loc {
                waymark.warnings.push(format!(
                    "{p} is outside the project root: recorded, never written by waymark"
                ));
            }
        }
        let transcript = t.event.common.transcript_path.as_deref();
        let url = transcript.and_then(super::transcript_url);
        let contributor = super::contributor_of(t.event);
        for loc in t.paths {
            record.add_file(loc.display(), url.clone(), contributor.clone(), &ranges);
        }
    }
    if let Some(torn) = super::append(&ctx.project, &ctx.config, record)? {
        let why = format!("the trace ended in a torn line, cut before appending: {torn}");
        ctx.log(crate::store::log::Level::Warn, t.event.name(), &why);
    }
    Ok(())
}

/// The mutation class and the attributed line ranges of a Write, Edit or NotebookEdit.
fn attributed_lines(
    call: &ToolCall,
    response: Option<&ToolResponse>,
) -> (&'static str, Vec<ranges::LineRange>) {
    match (&call.input, response) {
        (ToolInput::Write(_), Some(ToolResponse::Write(r)))
            if r.kind.as_deref() == Some("update") =>
        {
            ("overwrite", ranges::from_patch(&r.structured_patch))
        }
        (ToolInput::Write(w), Some(ToolResponse::Write(r))) => (
            "create",
            ranges::whole_content(r.content.as_deref().unwrap_or(&w.content)),
        ),
        (ToolInput::Write(w), _) => ("write", ranges::whole_content(&w.content)),
        (ToolInput::Edit(_), Some(ToolResponse::Edit(r))) => {
            ("edit", ranges::from_patch(&r.structured_patch))
        }
        (ToolInput::Edit(_), _) => ("edit", Vec::new()),
        // A Codex patch that adds one file: its lines, as a Write of it would have them;
        // an update's hunks carry no line numbers.
        (ToolInput::Patch(p), _) => {
            let ranges = match p.files.as_slice() {
                [f] if f.op == PatchOp::Add => p
                    .added_content(&f.path)
                    .map(|content| ranges::whole_content(&content))
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            ("patch", ranges)
        }
        _ => ("notebook_edit", Vec::new()),
    }
}
