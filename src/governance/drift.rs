//! ScopeDrift, the post-hook (docs/design.md, Post-hooks: US2): the intent map read, each
//! path a mutation touched judged (`waymark_core::governance::drift`, re-exported here),
//! scope expansions added to the map, the findings recorded and the warnings told.

use anyhow::Context as _;

use super::facts::Facts;
use super::intent_map;
use crate::claude::output::Output;
use crate::runtime::context::Ctx;
use crate::store::project::Located;
use crate::trace::{self, Waymark, kind};
use waymark_core::config::ScopeEnforcement;

pub use waymark_core::governance::drift::*;

/// The post-hook, after a mutation: judges every path; adds scope expansions to the intent
/// map, records the findings in the trace and tells the agent the warnings.
pub fn run(
    ctx: &Ctx,
    facts: &mut Facts,
    about: &Waymark,
    paths: &[Located],
    out: &mut Output,
) -> anyhow::Result<()> {
    if ctx.config.scope_enforcement == ScopeEnforcement::Off {
        return Ok(());
    }
    let Some((file, chosen)) = facts.intents_and_choice(ctx) else {
        return Ok(());
    };
    if file.running().next().is_none() {
        return Ok(());
    }
    let map_text = std::fs::read_to_string(intent_map::map_path(&ctx.project)).unwrap_or_default();
    let findings = judge(file, chosen.as_deref(), paths, &map_text);
    if findings.is_empty() {
        return Ok(());
    }
    let mut notes = Vec::new();
    let mut intent_id = None;
    for f in &findings {
        if let Finding::Expansion { path, intent, name } = f {
            intent_map::add(&ctx.project, intent, name, path)
                .context("cannot update intent_map.md")?;
        }
        match f {
            Finding::NearBoundary { intent, .. } | Finding::Expansion { intent, .. } => {
                intent_id.get_or_insert_with(|| intent.clone());
            }
            Finding::OutOfScope { intents, .. } if intents.len() == 1 => {
                intent_id.get_or_insert_with(|| intents[0].clone());
            }
            _ => {}
        }
        notes.push(f.message());
    }
    let wm = Waymark {
        kind: kind::SCOPE_WARNING.into(),
        intent_id,
        warnings: notes,
        ..about.clone()
    };
    trace::append_new(ctx, wm)?;
    for f in findings.iter().filter(|f| f.is_warning()) {
        out.say(format!("waymark: {}", f.message()));
    }
    Ok(())
}
