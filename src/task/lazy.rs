//! A member of hook.json that most events neither read nor change: read as the JSON this
//! waymark wrote (proven with the plan by `plan_sum`, docs/state.md), parsed when first
//! read, and written back as it was read until something changes it.
//!
//! The plan's outline and the newest checkpoints and receipts are kept so: a Stop at the
//! caps no longer parses, serializes and redacts five checkpoints and five receipts it
//! leaves alone (nor renders HOOK.md's sections of them, which the store then takes
//! back from HOOK.md).

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::redact::Vouched;

/// A value kept as the JSON it was read from until it is read ([`Deref`]) or changed
/// ([`DerefMut`], which lets the JSON go: the value is written anew).
#[derive(Debug, Clone, Default)]
pub struct Lazy<T> {
    /// Shared, so that the clone every change makes of the hook it read (to tell whether
    /// it changed) neither parses nor copies it, and is equal to it without a parse.
    parsed: Arc<OnceLock<T>>,
    read: Option<Vouched>,
}

impl<T: DeserializeOwned + Default> Lazy<T> {
    /// A value to be parsed from `json` when first read: JSON this waymark wrote, proven
    /// so.
    pub fn unparsed(json: Vouched) -> Lazy<T> {
        Lazy {
            parsed: Arc::default(),
            read: Some(json),
        }
    }

    /// The JSON it will be written as: the one it was read from, while nothing changed it.
    pub fn read_json(&self) -> Option<&Vouched> {
        self.read.as_ref()
    }

    /// The value, parsed on first need. JSON that does not parse (which a proven one
    /// does) reads as empty, and is drawn or filled anew by what needs it.
    pub fn get(&self) -> &T {
        self.parsed.get_or_init(|| {
            self.read
                .as_ref()
                .and_then(|json| serde_json::from_str(json.as_str()).ok())
                .unwrap_or_default()
        })
    }

    /// Whether the value has been parsed.
    #[cfg(test)]
    pub fn is_parsed(&self) -> bool {
        self.parsed.get().is_some()
    }
}

impl<T: DeserializeOwned + Default + PartialEq> Lazy<T> {
    /// Nothing read and nothing set: the member is left out of the file.
    pub fn is_unset(&self) -> bool {
        self.read.is_none() && *self.get() == T::default()
    }
}

impl<T: DeserializeOwned + Default> Deref for Lazy<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.get()
    }
}

/// The value to change: parsed, no longer shared, and its JSON let go.
impl<T: DeserializeOwned + Default + Clone> DerefMut for Lazy<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.get();
        self.read = None;
        Arc::make_mut(&mut self.parsed)
            .get_mut()
            .expect("parsed just above")
    }
}

impl<T> From<T> for Lazy<T> {
    fn from(value: T) -> Lazy<T> {
        Lazy {
            parsed: Arc::new(OnceLock::from(value)),
            read: None,
        }
    }
}

/// Two are equal when their values are; one read once is equal to its clones without a
/// parse (they share the parse, or were read from the one JSON text).
impl<T: DeserializeOwned + Default + PartialEq> PartialEq for Lazy<T> {
    fn eq(&self, other: &Lazy<T>) -> bool {
        let one_read = Arc::ptr_eq(&self.parsed, &other.parsed)
            || matches!((&self.read, &other.read), (Some(x), Some(y)) if x.same(y));
        one_read || self.get() == other.get()
    }
}

impl<T: DeserializeOwned + Default + Serialize> Serialize for Lazy<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.read {
            Some(json) => json.serialize_or(s, |s| self.get().serialize(s)),
            None => self.get().serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lazy<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Lazy<T>, D::Error> {
        T::deserialize(d).map(Lazy::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Clean;

    /// A list read from `json`, vouched for as a proven file's member is (this
    /// redactor's JSON).
    fn read(json: &str) -> Lazy<Vec<String>> {
        let (_, parsed) = Vouched::parse_first::<Vec<String>>(json).unwrap();
        Lazy::unparsed(parsed.vouch(&Vouched::fingerprint()).unwrap())
    }

    #[test]
    fn read_is_parsed_only_when_read_and_written_back_as_read() {
        let lazy = read(r#"["x", "y"]"#);
        let copy = lazy.clone();
        assert_eq!(lazy, copy);
        assert!(!lazy.is_parsed(), "comparing with its clone parses nothing");
        assert_eq!(*lazy, vec!["x".to_string(), "y".to_string()]);
        assert!(
            lazy.is_parsed() && copy.is_parsed(),
            "the clone shares the parse"
        );
        let spaced = read(r#"[ "x",   "y" ]"#);
        assert_eq!(Clean::json_pretty(&spaced).as_str(), r#"[ "x",   "y" ]"#);
        assert!(!spaced.is_parsed(), "written back without a parse");
        let plain = serde_json::to_string(&spaced).unwrap();
        assert_eq!(plain, r#"["x","y"]"#, "any other serializer gets the value");
    }

    #[test]
    fn a_change_lets_the_json_go_and_leaves_the_clone_alone() {
        let before = read(r#"["x"]"#);
        let mut after = before.clone();
        after.push("z".into());
        assert!(after.read_json().is_none());
        assert_ne!(before, after);
        assert_eq!(*before, vec!["x".to_string()]);
        let json = Clean::json_pretty(&after);
        assert!(json.as_str().contains("\"z\""));
    }

    #[test]
    fn unset_is_left_out_and_set_is_not() {
        assert!(Lazy::<Vec<String>>::default().is_unset());
        assert!(!Lazy::from(vec!["a".to_string()]).is_unset());
        assert!(
            !read("[]").is_unset(),
            "read JSON is written back, even empty"
        );
    }
}
