//! Intents and lessons for unit tests across crates (the `testing` feature).

use chrono::{DateTime, TimeZone, Utc};

use super::brain::{Category, Lesson};

/// An intents file in the intent-governed forks' format: one intent in progress with a
/// scope, constraints and criteria (and a field waymark does not know), one pending.
pub const SAMPLE_INTENTS: &str = r#"
# intents for the sprint
active_intents:
  - id: "INT-001"
    name: "JWT Authentication Migration"
    status: "IN_PROGRESS"
    owned_scope:
      - "src/auth/**"
      - "src/middleware/jwt.ts"
    constraints:
      - "Must not use external auth providers"
    acceptance_criteria:
      - "Unit tests in tests/auth/ pass"
    owner: alice
  - id: INT-002
    name: Docs
    status: PENDING
"#;

/// The day the lessons of the tests are learned.
pub fn lesson_day() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 2, 21, 10, 0, 0).unwrap()
}

/// A lesson `title` of `category`, for INT-001.
pub fn lesson(title: &str, category: Category) -> Lesson {
    Lesson {
        title: title.into(),
        issue: "it broke".into(),
        solution: "fix it".into(),
        intent: Some("INT-001".into()),
        category,
        detail: None,
    }
}
