//! Property-based fuzzing of event parsing and dispatch, in process (proptest): inputs are
//! the real fixtures of Claude Code 2.1.197, mutated (fields dropped or replaced with
//! random values of any type, hostile paths, truncation, random bytes). For every input:
//! no panic, hook.json still parses, nothing written outside the project. Bounded: 160
//! cases by default (a few seconds); `PROPTEST_CASES=5000` for a longer run.

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;

use waymark::runtime::context::Ctx;
use waymark::store::project::Project;

use crate::hostile::Sandbox;
use crate::util::{RECORDED_ROOT, fixtures};

/// Every fixture event (single files and the recorded session's lines), as text.
fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => out.push(text),
            Some("jsonl") if path.to_string_lossy().contains("session") => {
                out.extend(text.lines().map(str::to_string))
            }
            _ => {}
        }
    }
    assert!(out.len() > 40, "{}", out.len());
    out
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::from),
        prop_oneof![
            Just("../../../../etc/passwd"),
            Just("/etc/passwd"),
            Just("link/escape.txt"),
            Just("src/\u{0}nul.rs"),
            Just("Exit code 101\nerror"),
            Just("cargo test"),
            Just("git commit -m x"),
            Just("in_progress"),
            Just("completed"),
            Just("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Drop the n-th key of the object at a path chosen by `n`.
    Drop(usize),
    /// Replace the n-th key's value with any JSON value.
    Replace(usize, Value),
    /// Replace a value one level down (inside tool_input / tool_response).
    ReplaceInner(usize, usize, Value),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        (any::<usize>(), arb_json()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        (any::<usize>(), any::<usize>(), arb_json())
            .prop_map(|(i, j, v)| Mutation::ReplaceInner(i, j, v)),
    ]
}

fn apply(value: &mut Value, m: &Mutation) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    if obj.is_empty() {
        return;
    }
    let keys: Vec<String> = obj.keys().cloned().collect();
    match m {
        Mutation::Drop(i) => {
            obj.remove(&keys[i % keys.len()]);
        }
        Mutation::Replace(i, v) => {
            obj.insert(keys[i % keys.len()].clone(), v.clone());
        }
        Mutation::ReplaceInner(i, j, v) => {
            if let Some(inner) = obj
                .get_mut(&keys[i % keys.len()])
                .and_then(Value::as_object_mut)
            {
                let ks: Vec<String> = inner.keys().cloned().collect();
                if !ks.is_empty() {
                    inner.insert(ks[j % ks.len()].clone(), v.clone());
                }
            }
        }
    }
}

/// How the mutated JSON is turned into bytes: whole, cut short, or with random bytes
/// spliced in.
#[derive(Debug, Clone)]
enum Damage {
    None,
    Truncate(usize),
    Splice(usize, Vec<u8>),
}

fn arb_damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        6 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, b)| Damage::Splice(i, b)),
    ]
}

fn damage(mut bytes: Vec<u8>, d: &Damage) -> Vec<u8> {
    match d {
        Damage::None => bytes,
        Damage::Truncate(i) => {
            bytes.truncate(i % (bytes.len() + 1));
            bytes
        }
        Damage::Splice(i, b) => {
            let at = i % (bytes.len() + 1);
            bytes.splice(at..at, b.iter().copied());
            bytes
        }
    }
}

fn event_name(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text).ok()?["hook_event_name"]
        .as_str()
        .map(str::to_string)
}

/// One input through parse and dispatch, exactly as `waymark hook` does (without the
/// process around it), panics not caught: a panic fails the property.
fn run_one(root: &Path, key: &Path, name: Option<&str>, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let Ok(parsed) = waymark::claude::event::parse(name, text.as_bytes()) else {
        return;
    };
    let mut ctx = Ctx::new(Project::at(root.to_path_buf()));
    // Receipts for fuzzed validation commands: a key in the sandbox, not the user's.
    ctx.config.key_file = key.to_string_lossy().into_owned();
    if ctx.project.check().is_err() {
        return;
    }
    let handled = waymark::handlers::dispatch(&ctx, &parsed.event);
    if let Some(json) = handled.out.to_json(parsed.event.name()) {
        serde_json::to_string(&json).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(160),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn mutated_fixtures_never_panic_corrupt_state_or_escape(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(arb_mutation(), 0..4),
        dmg in arb_damage(),
        named in any::<bool>(),
    ) {
        thread_local! {
            static SANDBOX: Sandbox = Sandbox::new();
            static SEEDS: Vec<String> = seeds();
        }
        SANDBOX.with(|s| SEEDS.with(|seeds| {
            let root = s.root();
            let before = s.outside_state();
            let text = seed.get(seeds).replace(RECORDED_ROOT, root.to_str().unwrap());
            let name = event_name(&text);
            let mut value: Value = serde_json::from_str(&text).unwrap();
            for m in &mutations {
                apply(&mut value, m);
            }
            let bytes = damage(serde_json::to_vec(&value).unwrap(), &dmg);
            let key = s.base.path().join("proj/.key-for-fuzzing");
            run_one(&root, &key, if named { name.as_deref() } else { None }, &bytes);
            if let Ok(text) = std::fs::read_to_string(root.join(".orchestration/hook.json")) {
                prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "hook.json no longer parses");
            }
            prop_assert_eq!(s.outside_state(), before, "written outside the project");
            Ok(())
        }))?;
    }
}
