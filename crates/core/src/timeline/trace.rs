//! The task's records in the Agent Trace ledger as events: files changed, commands with
//! effects outside the work tree, scope warnings and intent transitions. Rewinds are told
//! by the history; other commands and failed tool calls are left out.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Event, Sources, event, kind};
use crate::shell;
use crate::trace::{Record, Waymark, kind as tk};

pub(super) fn events<'a>(src: &'a Sources<'a>) -> impl Iterator<Item = Event> + 'a {
    src.trace.iter().filter_map(move |r| {
        let w = r.waymark()?;
        if w.task_id.as_deref() != Some(src.task_id) {
            return None;
        }
        let time = DateTime::parse_from_rfc3339(&r.timestamp)
            .ok()?
            .with_timezone(&Utc);
        let (kind, what, details) = about(src, r, w)?;
        let mut e = event(src, time, kind, what, None, details);
        e.details
            .insert("session_id".into(), Value::from(&*w.session_id));
        Some(e)
    })
}

type About = (&'static str, String, Vec<(&'static str, Value)>);

fn about(src: &Sources, r: &Record, w: &Waymark) -> Option<About> {
    let command = w.command.as_deref().unwrap_or_default();
    match w.kind.as_str() {
        tk::MUTATION => {
            let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
            let class = w.mutation_class.as_deref().unwrap_or("change");
            let what = format!("{class} {}", paths.join(", "));
            let details = vec![
                ("files", Value::from(paths)),
                ("mutation", Value::from(class)),
            ];
            Some((kind::FILE_CHANGED, what, details))
        }
        tk::BASH if shell::classify(command, &[], src.side_effect_commands).side_effect => {
            let exit = w.exit_code.unwrap_or(-1);
            let what = format!("side effect: {command} (exit {exit})");
            let details = vec![
                ("command", Value::from(command)),
                ("exit_code", Value::from(exit)),
            ];
            Some((kind::SIDE_EFFECT, what, details))
        }
        tk::SCOPE_WARNING => {
            let what = format!("scope warning: {}", w.warnings.join("; "));
            let details = vec![("warnings", Value::from(w.warnings.clone()))];
            Some((kind::SCOPE_WARNING, what, details))
        }
        tk::TRANSITION => {
            let t = w.transition.as_ref()?;
            let what = format!("intent {}: {} -> {}", t.intent_id, t.from, t.to);
            let details = vec![
                ("intent_id", Value::from(&*t.intent_id)),
                ("from", Value::from(&*t.from)),
                ("to", Value::from(&*t.to)),
            ];
            Some((kind::INTENT, what, details))
        }
        _ => None,
    }
}
