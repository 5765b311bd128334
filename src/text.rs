//! Small text helpers shared by the renderers.

use chrono::{DateTime, Utc};

/// Cuts `s` to at most `max` characters (not bytes), marking the cut with `…`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The last `max` characters of `s` (output tails keep the end, where errors are).
pub fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let mut out = String::from("…");
    out.extend(s.chars().skip(n - max + 1));
    out
}

/// `42s`, `5m`, `3h 12m`, `2d 4h`: how long ago `then` was.
pub fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// RFC 3339 to the second, the way every file waymark writes shows times.
pub fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// One line: newlines folded to spaces (for table cells and log lines).
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The message of a caught panic (`catch_unwind`'s payload).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo", 5), "héllo");
        assert_eq!(truncate("héllo!", 5), "héll…");
        assert_eq!(tail("abcdef", 4), "…def");
        assert_eq!(truncate(&"é".repeat(600), 500).chars().count(), 500);
    }

    #[test]
    fn ago_reads_well() {
        let now = Utc::now();
        assert_eq!(ago(now, now - Duration::seconds(5)), "5s");
        assert_eq!(ago(now, now - Duration::minutes(7)), "7m");
        assert_eq!(ago(now, now - Duration::minutes(192)), "3h 12m");
    }
}
