//! ScopeDrift's judging (docs/design.md, Post-hooks: US2): how each path a mutation
//! touched stands against the active intent's `owned_scope` and the intent map.

use super::intent::{Intent, IntentFile};
use super::scope::Located;
use super::{intent_map, scope};

/// One observation about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Outside the active intent's scope (or outside the project root, or, with several
    /// intents in progress and none chosen, in no intent's scope).
    OutOfScope {
        path: String,
        intents: Vec<String>,
        scope: Vec<String>,
    },
    /// In scope, in the parent directory of a mapped scope path.
    NearBoundary {
        path: String,
        intent: String,
        beside: String,
    },
    /// In scope but not yet in intent_map.md: noted, and added to the map.
    Expansion {
        path: String,
        intent: String,
        name: String,
    },
}

impl Finding {
    /// Warnings are told to the agent; an expansion is only a note in the trace.
    pub fn is_warning(&self) -> bool {
        !matches!(self, Finding::Expansion { .. })
    }

    pub fn message(&self) -> String {
        match self {
            Finding::OutOfScope {
                path,
                intents,
                scope,
            } => {
                let who = intents.join(", ");
                if scope.is_empty() {
                    format!(
                        "Scope drift: {path} is out of scope: it is in no active intent's owned_scope ({who}). Keep to the intent's files, or choose the intent that owns it with `waymark intent use ID`."
                    )
                } else {
                    format!(
                        "Scope drift: {path} is out of scope for {who} (owned_scope: {}). Keep to the intent's files, or ask the user to widen its owned_scope in .orchestration/active_intents.yaml.",
                        scope.join(", ")
                    )
                }
            }
            Finding::NearBoundary {
                path,
                intent,
                beside,
            } => format!(
                "Scope drift: {path} is in scope for {intent} but near the boundary: it sits in the parent directory of scope path {beside}, where neighbouring files are out of scope."
            ),
            Finding::Expansion { path, intent, .. } => format!(
                "Scope expansion: {path} matches {intent}'s scope but was not in intent_map.md; added."
            ),
        }
    }
}

/// Judges every path of one event. `map_text` is intent_map.md's content ("" when absent).
/// No intent in progress, or an active intent without `owned_scope`: nothing to judge.
pub fn judge(
    file: &IntentFile,
    chosen: Option<&str>,
    paths: &[Located],
    map_text: &str,
) -> Vec<Finding> {
    let running: Vec<&Intent> = file.running().collect();
    if running.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for loc in paths.iter().filter(|l| scoped(file, chosen, l)) {
        let (path, inside) = (loc.display(), loc.inside().is_some());
        let Some(intent) = file.active(chosen, inside.then_some(path)) else {
            out.push(Finding::OutOfScope {
                path: path.into(),
                intents: running.iter().map(|i| i.id.clone()).collect(),
                scope: Vec::new(),
            });
            continue;
        };
        if !inside || !scope::in_scope(&intent.owned_scope, path) {
            out.push(Finding::OutOfScope {
                path: path.into(),
                intents: vec![intent.id.clone()],
                scope: intent.owned_scope.clone(),
            });
            continue;
        }
        if let Some(beside) = scope::near_boundary(&intent.owned_scope, path) {
            out.push(Finding::NearBoundary {
                path: path.into(),
                intent: intent.id.clone(),
                beside: beside.into(),
            });
        }
        if !intent_map::is_mapped(map_text, &intent.id, path) {
            out.push(Finding::Expansion {
                path: path.into(),
                intent: intent.id.clone(),
                name: intent.name.clone(),
            });
        }
    }
    out
}

/// Whether a scope judges a write to `loc`: an intent is in progress, and the one `loc`
/// works under owns a scope (under none, the write is out of every scope). What else
/// deny mode refuses (a hard link) is refused only where this holds.
pub fn scoped(file: &IntentFile, chosen: Option<&str>, loc: &Located) -> bool {
    file.running().next().is_some()
        && file
            .active(chosen, loc.inside())
            .is_none_or(|i| !i.owned_scope.is_empty())
}

/// The intents in progress whose scopes all hold `path` (two or more is a scope conflict).
pub fn claimants<'a>(file: &'a IntentFile, path: &str) -> Vec<&'a Intent> {
    file.running().filter(|i| i.owns(path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTENTS: &str = r#"
active_intents:
  - id: INT-001
    name: JWT auth
    status: IN_PROGRESS
    owned_scope: ["src/auth/**", "src/session.ts"]
  - id: INT-002
    name: Docs
    status: PENDING
    owned_scope: ["docs/**", "src/auth/README.md"]
"#;

    fn file() -> IntentFile {
        crate::governance::intent::parse(INTENTS).unwrap()
    }

    fn inside(p: &str) -> Located {
        Located::Inside(p.into())
    }

    /// A scope judges a write only while an intent is in progress and the intent the
    /// path works under owns one.
    #[test]
    fn a_scope_applies_only_to_an_intent_in_progress_that_owns_one() {
        let f = file();
        assert!(scoped(&f, None, &inside("src/auth/login.ts")));
        assert!(
            scoped(&f, None, &inside("src/main.ts")),
            "under none: out of scope"
        );
        let pending = INTENTS.replace("IN_PROGRESS", "PENDING");
        let none_running = crate::governance::intent::parse(&pending).unwrap();
        assert!(!scoped(&none_running, None, &inside("src/auth/login.ts")));
        let unscoped =
            "active_intents:\n  - id: INT-9\n    name: Anything\n    status: IN_PROGRESS\n";
        let unscoped = crate::governance::intent::parse(unscoped).unwrap();
        assert!(!scoped(&unscoped, None, &inside("src/auth/login.ts")));
    }

    #[test]
    fn each_path_of_one_event_is_judged() {
        let map = "## INT-001: JWT auth\n- src/auth/login.ts\n";
        let paths = [
            inside("src/auth/login.ts"),
            inside("src/auth/new.ts"),
            inside("src/session.ts"),
            inside("src/main.ts"),
            Located::Outside("/etc/hosts".into()),
        ];
        let f = judge(&file(), None, &paths, map);
        let kinds: Vec<_> = f
            .iter()
            .map(|x| match x {
                Finding::OutOfScope { path, .. } => format!("out {path}"),
                Finding::NearBoundary { path, .. } => format!("near {path}"),
                Finding::Expansion { path, .. } => format!("new {path}"),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "new src/auth/new.ts",
                "near src/session.ts",
                "new src/session.ts",
                "out src/main.ts",
                "out /etc/hosts",
            ]
        );
        assert!(
            f[3].message()
                .contains("owned_scope: src/auth/**, src/session.ts")
        );
        assert!(f.iter().filter(|x| x.is_warning()).count() == 3);
    }

    #[test]
    fn nothing_without_a_running_intent() {
        let f = crate::governance::intent::parse("active_intents:\n  - id: A\n    status: DONE\n")
            .unwrap();
        assert!(judge(&f, None, &[inside("x")], "").is_empty());
    }

    #[test]
    fn several_running_none_owning_the_file() {
        let f =
            crate::governance::intent::parse(&INTENTS.replace("PENDING", "IN_PROGRESS")).unwrap();
        let out = judge(&f, None, &[inside("src/main.ts")], "");
        assert!(matches!(&out[0], Finding::OutOfScope { intents, .. } if intents.len() == 2));
        // The file both scopes hold is a conflict.
        let c = claimants(&f, "src/auth/README.md");
        assert_eq!(
            c.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            vec!["INT-001", "INT-002"]
        );
        assert_eq!(claimants(&f, "src/auth/login.ts").len(), 1);
    }
}
