//! Reading Claude Code's session transcript: only its tail, only for context usage.

use std::path::Path;

use serde::Deserialize;

use crate::store::find_from_end;

#[derive(Deserialize)]
struct Line {
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    usage: Option<Usage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Usage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

/// Tokens in the context window at the last assistant message: its prompt (with cache
/// reads and writes) plus its output. `None` when the transcript is missing or has none.
pub fn last_context_tokens(path: &Path) -> Option<u64> {
    find_from_end(path, 256 * 1024, |line| {
        if !line.contains("\"usage\"") {
            return None;
        }
        let u = serde_json::from_str::<Line>(line).ok()?.message?.usage?;
        Some(
            u.input_tokens
                + u.cache_creation_input_tokens
                + u.cache_read_input_tokens
                + u.output_tokens,
        )
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_recorded_transcript() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code-2.1.197/transcript-sample.jsonl");
        assert_eq!(last_context_tokens(&p), Some(20581 + 22));
        assert_eq!(last_context_tokens(Path::new("/nonexistent")), None);
    }
}
