//! The hook state machine, exactly as the transition table of docs/design.md (Task state
//! machine).
//!
//! Two transitions are not in the table because they apply from every non-terminal state:
//! `crash_detected` → `recovering` and `abandon` → `abandoned`. waymark adds a third of the
//! same kind, `fail` → `failed` (`waymark task fail`), since the table names `failed` as a
//! terminal state but gives no way into it.

/// A fieldless enum whose every value is named once: its serde name, `as_str`, `parse`,
/// `Display` and `ALL` (every value, in order) all come from the names given here.
macro_rules! named {
    ($(#[$meta:meta])* pub enum $ty:ident {
        $($(#[$vmeta:meta])* $variant:ident = $name:literal,)+
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $ty {
            $($(#[$vmeta])* #[serde(rename = $name)] $variant,)+
        }

        impl $ty {
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            pub fn parse(s: &str) -> Option<$ty> {
                Self::ALL.into_iter().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use named;

named! {
    #[derive(Default)]
    pub enum HookState {
        #[default]
        Initializing = "initializing",
        StepPending = "step_pending",
        StepRunning = "step_running",
        StepValidating = "step_validating",
        AwaitingHuman = "awaiting_human",
        Recovering = "recovering",
        Completed = "completed",
        Failed = "failed",
        Abandoned = "abandoned",
    }
}

/// Triggers that are valid from any non-terminal state.
pub const CRASH_DETECTED: &str = "crash_detected";
pub const ABANDON: &str = "abandon";
pub const FAIL: &str = "fail";

impl HookState {
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Abandoned)
    }
}

/// The table: `None` is the state of a hook that does not exist yet.
fn table(from: Option<HookState>) -> &'static [HookState] {
    use HookState::*;
    match from {
        None => &[Initializing],
        Some(Initializing) => &[StepPending],
        Some(StepPending) => &[StepRunning, Completed, Abandoned],
        Some(StepRunning) => &[StepValidating, StepPending, AwaitingHuman, Abandoned],
        Some(StepValidating) => &[StepPending, AwaitingHuman],
        Some(AwaitingHuman) => &[StepPending, StepRunning, Abandoned],
        Some(Recovering) => &[StepPending, StepRunning, AwaitingHuman],
        Some(Completed | Failed | Abandoned) => &[],
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("{from} is terminal: no transition to {to} ({trigger})")]
    Terminal {
        from: HookState,
        to: HookState,
        trigger: String,
    },
    #[error("no transition from {} to {to} ({trigger})", .from.map(HookState::as_str).unwrap_or("(none)"))]
    Invalid {
        from: Option<HookState>,
        to: HookState,
        trigger: String,
    },
}

/// Checks one transition. `trigger` matters only for the any-state transitions.
pub fn check(from: Option<HookState>, to: HookState, trigger: &str) -> Result<(), TransitionError> {
    if let Some(f) = from.filter(|f| f.is_terminal()) {
        return Err(TransitionError::Terminal {
            from: f,
            to,
            trigger: trigger.into(),
        });
    }
    let any_state = from.is_some()
        && matches!(
            (trigger, to),
            (CRASH_DETECTED, HookState::Recovering)
                | (ABANDON, HookState::Abandoned)
                | (FAIL, HookState::Failed)
        );
    if any_state || table(from).contains(&to) {
        Ok(())
    } else {
        Err(TransitionError::Invalid {
            from,
            to,
            trigger: trigger.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use HookState::*;

    /// Every pair, by the table: (from, to) valid with an ordinary trigger.
    fn expected(from: Option<HookState>, to: HookState) -> bool {
        let valid: &[(Option<HookState>, HookState)] = &[
            (None, Initializing),
            (Some(Initializing), StepPending),
            (Some(StepPending), StepRunning),
            (Some(StepPending), Completed),
            (Some(StepPending), Abandoned),
            (Some(StepRunning), StepValidating),
            (Some(StepRunning), StepPending),
            (Some(StepRunning), AwaitingHuman),
            (Some(StepRunning), Abandoned),
            (Some(StepValidating), StepPending),
            (Some(StepValidating), AwaitingHuman),
            (Some(AwaitingHuman), StepPending),
            (Some(AwaitingHuman), StepRunning),
            (Some(AwaitingHuman), Abandoned),
            (Some(Recovering), StepPending),
            (Some(Recovering), StepRunning),
            (Some(Recovering), AwaitingHuman),
        ];
        valid.contains(&(from, to))
    }

    #[test]
    fn every_pair_with_an_ordinary_trigger() {
        let froms = std::iter::once(None).chain(HookState::ALL.into_iter().map(Some));
        for from in froms {
            for to in HookState::ALL {
                let got = check(from, to, "step_start").is_ok();
                assert_eq!(got, expected(from, to), "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn crash_abandon_and_fail_from_every_non_terminal_state() {
        for from in HookState::ALL {
            for (trigger, to) in [
                (CRASH_DETECTED, Recovering),
                (ABANDON, Abandoned),
                (FAIL, Failed),
            ] {
                let got = check(Some(from), to, trigger);
                if from.is_terminal() {
                    assert!(
                        matches!(got, Err(TransitionError::Terminal { .. })),
                        "{from} {trigger}"
                    );
                } else {
                    assert!(got.is_ok(), "{from} {trigger}");
                }
            }
        }
        // The special triggers only reach their own state.
        assert!(check(Some(StepRunning), Completed, CRASH_DETECTED).is_err());
        assert!(check(None, Recovering, CRASH_DETECTED).is_err());
    }

    #[test]
    fn terminal_states_reject_everything() {
        for from in [Completed, Failed, Abandoned] {
            for to in HookState::ALL {
                assert!(check(Some(from), to, "anything").is_err());
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for s in HookState::ALL {
            assert_eq!(HookState::parse(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
        }
    }
}
