//! What the post-hooks of one event read: the intents file, the chosen intent and the
//! trace's tail, each at most once and only when a post-hook asks.

use anyhow::Context as _;

use super::intent::{self, IntentFile};
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::trace;

#[derive(Default)]
pub struct Facts {
    /// The task's intent, a hint for choosing the active intent.
    task_intent: Option<String>,
    /// Another session worked on the task within `conflict_window` (the task's session
    /// table says so): only then can a file have been changed by two sessions, and only
    /// then is the trace's tail worth reading for it.
    pub other_sessions: bool,
    /// `waymark intent use` choice, else the task's intent.
    chosen: Option<String>,
    intents: Option<Option<IntentFile>>,
    recent: Option<trace::Recent>,
}

impl Facts {
    pub fn new(task_intent: Option<String>) -> Facts {
        Facts {
            task_intent,
            ..Default::default()
        }
    }

    /// The intents file, when it exists and parses. A malformed file is logged (once per
    /// event) and treated as absent, so every other hook keeps working.
    pub fn intents(&mut self, ctx: &Ctx) -> Option<&IntentFile> {
        if self.intents.is_none() {
            let loaded = match intent::load(&ctx.project) {
                Ok(Some(f)) => Some(f),
                // No intents file is the normal state of a project that does not use
                // intents; it is an error only when one was evidently in use.
                Ok(None) => {
                    let in_use = self
                        .task_intent
                        .clone()
                        .or_else(|| intent::chosen(&ctx.project));
                    if let Some(id) = in_use {
                        let path = intent::intents_path(&ctx.project);
                        let why = format!(
                            "{} is missing but intent {id} is in use; intent governance is off until it is restored",
                            path.display()
                        );
                        ctx.log(Level::Error, "intents", &why);
                    }
                    None
                }
                Err(e) => {
                    let why = format!("{e}; intent governance is off until it is fixed");
                    ctx.log(Level::Error, "intents", &why);
                    None
                }
            };
            if loaded.is_some() {
                self.chosen = intent::chosen(&ctx.project).or(self.task_intent.clone());
            }
            self.intents = Some(loaded);
        }
        self.intents.as_ref().and_then(Option::as_ref)
    }

    /// The intents file with the chosen intent's id (`waymark intent use`, else the task's).
    pub fn intents_and_choice(&mut self, ctx: &Ctx) -> Option<(&IntentFile, Option<String>)> {
        self.intents(ctx);
        let chosen = self.chosen.clone();
        self.intents
            .as_ref()
            .and_then(Option::as_ref)
            .map(|f| (f, chosen))
    }

    /// The id of the intent an event on `path` works under, if any.
    pub fn intent_id(&mut self, ctx: &Ctx, path: Option<&str>) -> Option<String> {
        let task_intent = self.task_intent.clone();
        match self.intents_and_choice(ctx) {
            Some((f, chosen)) => f.active(chosen.as_deref(), path).map(|i| i.id.clone()),
            None => task_intent,
        }
    }

    /// The last `trace_window` records of the ledger.
    pub fn recent(&mut self, ctx: &Ctx) -> anyhow::Result<&trace::Recent> {
        if self.recent.is_none() {
            let r = trace::recent(&ctx.project, ctx.config.trace_window)
                .context("cannot read the trace tail")?;
            self.recent = Some(r);
        }
        Ok(self.recent.as_ref().expect("just read"))
    }
}
