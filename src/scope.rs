//! Scope globs: which files an intent owns.

use globset::{Glob, GlobSetBuilder};

/// True when `path` (root-relative) matches one of the `owned_scope` globs. A glob naming
/// a directory (`src/auth` or `src/auth/`) owns everything below it.
pub fn in_scope(scope: &[String], path: &str) -> bool {
    let mut builder = GlobSetBuilder::new();
    for pattern in scope {
        let p = pattern.trim().trim_start_matches("./");
        if p.is_empty() {
            continue;
        }
        for variant in [p.to_string(), format!("{}/**", p.trim_end_matches('/'))] {
            if let Ok(g) = Glob::new(&variant) {
                builder.add(g);
            }
        }
    }
    builder.build().is_ok_and(|set| set.is_match(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_directories() {
        let scope = vec![
            "src/auth/**".to_string(),
            "src/middleware/jwt.ts".into(),
            "docs".into(),
        ];
        assert!(in_scope(&scope, "src/auth/login.ts"));
        assert!(in_scope(&scope, "src/middleware/jwt.ts"));
        assert!(in_scope(&scope, "docs/a/b.md"));
        assert!(!in_scope(&scope, "src/main.rs"));
        assert!(!in_scope(&[], "x"));
    }
}
