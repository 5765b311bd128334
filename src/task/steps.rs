//! The step plan as hook.json holds it, read a step at a time.
//!
//! At the caps (113 steps) a TaskUpdate that completed one step parsed every step (0.55M
//! instructions), copied them all to tell later which had changed, and freed both copies.
//! A plan this waymark wrote, proven so by its sum (`plan_sum`, docs/state.md), is now kept
//! as its JSON and the place of each step in it. A step is parsed when something reads it;
//! its id, name, status and whether it touched files are read from its JSON lines without
//! a parse ([`Steps::position`], [`Steps::id_and_name`], [`Steps::status`],
//! [`Steps::last_with_files`]). A step
//! changed through `IndexMut` is written anew; the others are written back as they were
//! read, and the whole plan as read while nothing changed.
//!
//! The list is shared, not copied, by a clone (every change clones the hook it read, to
//! tell whether it changed). It is copied, a slot per step (few of them parsed), only when
//! the clone is changed; two plans that share it, or their unchanged steps, are equal
//! without a parse.

use std::ops::{Index, IndexMut, Range};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::model::{Step, StepStatus};
use crate::redact::Vouched;

#[derive(Debug, Clone, Default)]
pub struct Steps(Arc<Plan>);

#[derive(Debug, Clone, Default)]
struct Plan {
    /// The JSON the plan is written as while it is unchanged, as the file held it.
    whole: Option<Vouched>,
    /// The JSON a plan read unparsed was read from: the steps not parsed yet are parsed
    /// from it, and the unchanged ones written back from it.
    source: Option<Vouched>,
    /// A slot per step, found in `source` when first needed.
    slots: OnceLock<Vec<Slot>>,
    /// The outline beside it was drawn from it, or read with it and proven with it: it
    /// holds while the plan is unchanged ([`Steps::is_outlined`]).
    outlined: bool,
}

#[derive(Debug, Clone)]
struct Slot {
    /// Where the step stands in `source` (`None` for a step added since it was read).
    span: Option<Range<usize>>,
    /// What its JSON lines say of it, found with its span.
    head: Head,
    /// Changed (or handed out to be changed) since it was read: written from its value.
    changed: bool,
    /// Boxed: a slot per step is made (and copied by the first change) for every step of
    /// the plan, few of which are parsed; unboxed, the slots of 113 steps took 32 KB.
    step: OnceLock<Box<Step>>,
}

/// What a step's first lines say of it, without a parse: where its id and its name stand
/// (as written, quoted), and its status.
#[derive(Debug, Clone, Default)]
struct Head {
    id: Range<usize>,
    name: Range<usize>,
    status: Option<StepStatus>,
}

impl Slot {
    /// A step added since the plan was read (or a plan not read unparsed).
    fn of(step: Step) -> Slot {
        Slot::read(None, Head::default(), OnceLock::from(Box::new(step)))
    }

    /// A step as read, at `span` of the source (parsed already or not).
    fn read(span: Option<Range<usize>>, head: Head, step: OnceLock<Box<Step>>) -> Slot {
        Slot {
            span,
            head,
            changed: false,
            step,
        }
    }

    /// Its place in the source while it is as read.
    fn as_read(&self) -> Option<Range<usize>> {
        self.span.clone().filter(|_| !self.changed)
    }
}

impl Steps {
    /// A plan to be parsed from `json` a step at a time as they are read: JSON this
    /// waymark wrote, proven so by its sum, which therefore parses and is laid out as its
    /// serializer lays it out; never `[]` (an empty plan is parsed as read).
    pub fn unparsed(json: Vouched) -> Steps {
        Steps(Arc::new(Plan {
            whole: Some(json.clone()),
            source: Some(json),
            slots: OnceLock::new(),
            outlined: true,
        }))
    }

    /// Says that the outline beside the plan was just drawn from it.
    pub fn outlined(&mut self) {
        Arc::make_mut(&mut self.0).outlined = true;
    }

    /// Whether the outline beside the plan tells it: it was read with the plan, proven by
    /// their sum, or drawn from it, and the plan has not changed since.
    pub fn is_outlined(&self) -> bool {
        self.0.outlined
    }

    /// Keeps `json`, the plan as the file held it, to be written back whole while the plan
    /// is unchanged.
    pub fn keep_read(&mut self, json: Vouched) {
        Arc::make_mut(&mut self.0).whole = Some(json);
    }

    /// The JSON the plan will be written as while unchanged, if any.
    pub fn read_json(&self) -> Option<&Vouched> {
        self.0.whole.as_ref()
    }

    /// Whether the plan was read unparsed, as proven by its sum (what the file derived
    /// from it, its outline and listing, holds only then).
    pub fn read_unparsed(&self) -> bool {
        self.0.source.is_some()
    }

    /// Whether any step has been parsed (a plan read unparsed has none until one is read).
    pub fn is_parsed(&self) -> bool {
        self.parsed() > 0
    }

    /// How many steps have been parsed.
    pub fn parsed(&self) -> usize {
        self.0.slots.get().map_or(0, |slots| {
            slots.iter().filter(|s| s.step.get().is_some()).count()
        })
    }

    pub fn len(&self) -> usize {
        self.slots().len()
    }

    /// Whether there is no step, answered without looking: a plan kept unparsed is never
    /// empty.
    pub fn is_empty(&self) -> bool {
        self.0.source.is_none() && self.slots().is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Step> {
        let slot = self.slots().get(i)?;
        let step = slot.step.get_or_init(|| {
            let (json, span) = (self.source(), slot.span.clone().expect("a slot unparsed"));
            serde_json::from_str(&json.as_str()[span])
                .expect("a step of a plan proven to be this waymark's parses (docs/state.md)")
        });
        Some(step)
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter { steps: self, i: 0 }
    }

    /// Every step's status in plan order, read without parsing the steps.
    pub fn statuses(&self) -> impl DoubleEndedIterator<Item = StepStatus> + '_ {
        (0..self.len()).map(|i| self.status(i))
    }

    /// The steps of `status`, in plan order (only those are parsed).
    pub fn with_status(&self, status: StepStatus) -> impl Iterator<Item = &Step> + '_ {
        (0..self.len())
            .filter(move |&i| self.status(i) == status)
            .map(|i| &self[i])
    }

    /// Step `i`'s status, from its JSON line while it is unparsed.
    pub fn status(&self, i: usize) -> StepStatus {
        match self.unparsed_step(i).and_then(|(_, head)| head.status) {
            Some(status) => status,
            None => self[i].status,
        }
    }

    /// Where the step `id` stands, its id read from its JSON line while it is unparsed.
    pub fn position(&self, id: &str) -> Option<usize> {
        let quoted = serde_json::to_string(id).expect("a string serializes");
        (0..self.len()).find(|&i| match self.unparsed_step(i) {
            Some((_, head)) if !head.id.is_empty() => {
                self.source().as_str()[head.id.clone()] == quoted
            }
            _ => self[i].id == id,
        })
    }

    /// Step `i`'s id and name, read from its JSON lines while it is unparsed.
    pub fn id_and_name(&self, i: usize) -> (String, String) {
        let unquote = |span: &Range<usize>| -> Option<String> {
            serde_json::from_str(self.source().as_str().get(span.clone())?).ok()
        };
        if let Some((_, head)) = self.unparsed_step(i) {
            if let (Some(id), Some(name)) = (unquote(&head.id), unquote(&head.name)) {
                return (id, name);
            }
        }
        (self[i].id.clone(), self[i].name.clone())
    }

    /// The last step that touched files, in plan order; a step unparsed is parsed only
    /// when its JSON lists files.
    pub fn last_with_files(&self) -> Option<&Step> {
        (0..self.len())
            .rev()
            .find(|&i| match self.unparsed_step(i) {
                Some((json, _)) => lists_files(json),
                None => !self[i].files_touched.is_empty(),
            })
            .map(|i| &self[i])
    }

    /// Step `i`'s status in the plan as read (`None` for a step added since, or a plan
    /// not read unparsed), and whether the step is still as read.
    pub fn as_read(&self, i: usize) -> (Option<StepStatus>, bool) {
        let slot = &self.slots()[i];
        match slot.span {
            Some(_) => (slot.head.status, !slot.changed),
            None => (None, false),
        }
    }

    pub fn push(&mut self, step: Step) {
        self.changing().push(Slot::of(step));
    }

    /// The slots, to be changed: the plan is no longer as read, nor its outline drawn.
    fn changing(&mut self) -> &mut Vec<Slot> {
        self.slots();
        let plan = Arc::make_mut(&mut self.0);
        (plan.whole, plan.outlined) = (None, false);
        plan.slots.get_mut().expect("found above")
    }

    /// Step `i`'s JSON and what it says of the step, while the step is neither parsed
    /// nor changed.
    fn unparsed_step(&self, i: usize) -> Option<(&str, &Head)> {
        let slot = &self.slots()[i];
        let span = slot.as_read().filter(|_| slot.step.get().is_none())?;
        Some((&self.source().as_str()[span], &slot.head))
    }

    fn source(&self) -> &Vouched {
        self.0
            .source
            .as_ref()
            .expect("a slot with a span has a source")
    }

    fn slots(&self) -> &Vec<Slot> {
        self.0.slots.get_or_init(|| {
            // Unset only for a plan read unparsed (or the empty default).
            let Some(json) = &self.0.source else {
                return Vec::new();
            };
            if let Some(found) = items(json.as_str()) {
                let slot = |(span, head)| Slot::read(Some(span), head, OnceLock::new());
                return found.into_iter().map(slot).collect();
            }
            // Not laid out as this waymark lays a plan out: found by parsing it whole.
            let (steps, spans) = json
                .items::<Step>()
                .expect("a plan proven to be this waymark's parses (docs/state.md)");
            let slot = |(step, span)| {
                Slot::read(Some(span), Head::default(), OnceLock::from(Box::new(step)))
            };
            steps.into_iter().zip(spans).map(slot).collect()
        })
    }
}

/// Where each step stands in a plan's JSON as this waymark's pretty serializer writes it,
/// and what it says of itself ([`Head::of`]). A step is an object whose closing brace
/// stands at the start of its line, and nothing in a step is an object: a `}` that starts
/// a line (no string holds a newline) ends a step, whose `{` is the first after the step
/// before. Found a `}` at a time (`text::closing_braces`): a line at a time cost 0.2M
/// instructions for a plan of 113 steps. `None` for JSON laid out otherwise.
fn items(text: &str) -> Option<Vec<(Range<usize>, Head)>> {
    let bytes = text.as_bytes();
    let starts_line = |at: usize| bytes[..at].iter().rev().find(|&&b| b != b' ') == Some(&b'\n');
    let (mut found, mut from) = (Vec::new(), 0);
    for end in crate::text::closing_braces(bytes).filter(|&at| starts_line(at)) {
        let start = from + bytes[from..end].iter().position(|&b| b == b'{')?;
        if !starts_line(start) {
            return None;
        }
        found.push((start..end + 1, Head::of(&text[start..=end], start)));
        from = end + 1;
    }
    // A plan read unparsed is never `[]`: no step found is JSON laid out otherwise.
    (!found.is_empty()).then_some(found)
}

impl Head {
    /// What `item`, a step's JSON standing at `offset` in the plan's, says of itself. The
    /// serializer writes its first members in this order, one a line, as a member of
    /// hook.json lays them out (six spaces in): `id`, `name`, `index`, `status`. Each line
    /// is taken as it is expected to be, and what is not (a plan laid out otherwise, or a
    /// step of another shape) is left for the parse. Three newlines found in the step's
    /// first lines and four prefixes compared: taken a line at a time with its indent
    /// counted, the heads of 113 steps cost 120K instructions.
    fn of(item: &str, offset: usize) -> Head {
        let bytes = item.as_bytes();
        let mut head = Head::default();
        if !bytes.starts_with(b"{\n") {
            return head;
        }
        let mut lines = crate::text::newlines(bytes);
        let _ = lines.next();
        // The value of the member `key` on the line that starts at `at`, quoted as
        // written, and where the next line starts.
        let mut member = |at: usize, key: &[u8]| -> Option<(Range<usize>, usize)> {
            let end = lines.next()?;
            let value = bytes[at..end].strip_prefix(key)?;
            let value = value.strip_suffix(b",").unwrap_or(value);
            let from = at + key.len();
            Some((offset + from..offset + from + value.len(), end + 1))
        };
        let Some((id, at)) = member(2, b"      \"id\": ") else {
            return head;
        };
        head.id = id;
        let Some((name, at)) = member(at, b"      \"name\": ") else {
            return head;
        };
        head.name = name;
        let Some((_, at)) = member(at, b"      \"index\": ") else {
            return head;
        };
        if let Some(value) = bytes[at..].strip_prefix(b"      \"status\": \"") {
            let status = value.iter().position(|&b| b == b'"').map(|n| &value[..n]);
            head.status = status.and_then(StepStatus::parse_bytes);
        }
        head
    }
}

/// Whether a step's JSON lists files touched. Of its lists, `files_touched` comes last,
/// and only the times (no `[` in them) after it: a step lists files when its last `[`
/// opens that list (a `[` in a file's name falls back to a search of the step).
fn lists_files(item: &str) -> bool {
    const FILES: &str = "\"files_touched\": ";
    match item.rfind('[') {
        None => false,
        Some(at) if item[..at].ends_with(FILES) => true,
        Some(at) if item[..at].ends_with("\"receipt_ids\": ") => false,
        Some(_) => item.contains(&format!("{FILES}[")),
    }
}

/// The steps in plan order, each parsed as it is reached.
pub struct Iter<'a> {
    steps: &'a Steps,
    i: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Step;
    fn next(&mut self) -> Option<&'a Step> {
        let step = self.steps.get(self.i)?;
        self.i += 1;
        Some(step)
    }
}

impl<'a> IntoIterator for &'a Steps {
    type Item = &'a Step;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Index<usize> for Steps {
    type Output = Step;
    fn index(&self, i: usize) -> &Step {
        self.get(i).expect("a step of the plan")
    }
}

/// The step, to be changed: it is written anew from then on.
impl IndexMut<usize> for Steps {
    fn index_mut(&mut self, i: usize) -> &mut Step {
        let _ = &self[i];
        let slot = &mut self.changing()[i];
        slot.changed = true;
        slot.step.get_mut().expect("parsed above")
    }
}

impl From<Vec<Step>> for Steps {
    fn from(steps: Vec<Step>) -> Steps {
        Steps(Arc::new(Plan {
            whole: None,
            source: None,
            slots: OnceLock::from(steps.into_iter().map(Slot::of).collect::<Vec<_>>()),
            outlined: false,
        }))
    }
}

/// Two plans are equal when their steps are: how they will be written does not count.
impl PartialEq for Steps {
    fn eq(&self, other: &Steps) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        if let (Some(a), Some(b)) = (&self.0.whole, &other.0.whole) {
            if a.same(b) {
                return true;
            }
        }
        let same_source = match (&self.0.source, &other.0.source) {
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        };
        let (a, b) = (self.slots(), other.slots());
        a.len() == b.len()
            && (0..a.len()).all(|i| {
                let one_read =
                    same_source && a[i].as_read().is_some_and(|x| Some(x) == b[i].as_read());
                one_read || self[i] == other[i]
            })
    }
}

impl Serialize for Steps {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// Steps still as read, one after the other in the source: written as one raw part
        /// (the steps and the separators between them, as the serializer writes them at
        /// this depth: one part instead of one for each of a hundred steps); or step `i`,
        /// written from its value.
        enum Run {
            Read(Range<usize>),
            Step(usize),
        }
        struct Part<'a>(&'a Steps, &'a Run);
        impl Serialize for Part<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.1 {
                    Run::Read(span) => self.0.source().serialize_part_or(s, span.clone(), |_| {
                        unreachable!("runs are made for a serializer that writes them raw")
                    }),
                    Run::Step(i) => self.0[*i].serialize(s),
                }
            }
        }
        let all = |s: S| {
            if !Vouched::is_written_raw() {
                return s.collect_seq(self.iter());
            }
            let mut runs: Vec<Run> = Vec::new();
            for (i, slot) in self.slots().iter().enumerate() {
                match (slot.as_read(), runs.last_mut()) {
                    (Some(span), Some(Run::Read(run))) if self.separates(run.end..span.start) => {
                        run.end = span.end
                    }
                    (Some(span), _) => runs.push(Run::Read(span)),
                    (None, _) => runs.push(Run::Step(i)),
                }
            }
            s.collect_seq(runs.iter().map(|run| Part(self, run)))
        };
        match &self.0.whole {
            Some(json) => json.serialize_or(s, all),
            None => all(s),
        }
    }
}

impl Steps {
    /// Whether `between`, in the source, is only what separates two items of the list.
    fn separates(&self, between: Range<usize>) -> bool {
        let text = &self.source().as_str()[between];
        text.strip_prefix(',')
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_whitespace()))
    }
}

impl<'de> Deserialize<'de> for Steps {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Steps, D::Error> {
        Vec::deserialize(d).map(Steps::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Clean;
    use crate::task::{Hook, StepSource};
    use std::collections::BTreeMap;

    /// 40 steps: the first two completed, the third running (it touched a file with a `[`
    /// in its name, and has a receipt), the tenth with a receipt, one with a quote in its
    /// id, one with braces (and a newline) in its name.
    fn plan() -> Vec<Step> {
        let now = chrono::Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for n in 1..=40 {
            let id = if n == 9 {
                "a\"b".to_string()
            } else {
                format!("s{n}")
            };
            let name = match n {
                5 => "Step 5: {braces} }\n  }".to_string(),
                _ => format!("Step {n}"),
            };
            h.add_step(&id, &name, "", None, StepSource::Task, now);
        }
        h.steps[0].status = StepStatus::Completed;
        h.steps[1].status = StepStatus::Completed;
        h.steps[2].status = StepStatus::InProgress;
        h.steps[2].files_touched.push("src/a[1].rs".into());
        h.steps[2].receipt_ids.push("rcpt-2".into());
        h.steps[9].receipt_ids.push("rcpt-9".into());
        h.steps.iter().cloned().collect()
    }

    /// `steps` as hook.json holds them: a member of an object, pretty.
    fn json<T: Serialize + ?Sized>(steps: &T) -> Clean {
        Clean::json_pretty(&BTreeMap::from([("steps", steps)]))
    }

    /// The plan as a save writes it, read back unparsed.
    fn read(steps: &[Step]) -> Steps {
        Steps::unparsed(Vouched::last_member(&json(steps), "steps").unwrap())
    }

    #[test]
    fn a_plan_read_unparsed_tells_ids_statuses_and_files_without_a_parse() {
        let plan = plan();
        let steps = read(&plan);
        assert_eq!(steps.len(), 40);
        assert_eq!(steps.position("s7"), Some(6));
        assert_eq!(steps.position("a\"b"), Some(8));
        assert_eq!(steps.position("s41"), None);
        let statuses: Vec<StepStatus> = plan.iter().map(|s| s.status).collect();
        assert_eq!(steps.statuses().collect::<Vec<_>>(), statuses);
        assert_eq!(steps.id_and_name(8), ("a\"b".into(), "Step 9".into()));
        let braces = ("s5".into(), "Step 5: {braces} }\n  }".into());
        assert_eq!(steps.id_and_name(4), braces);
        assert_eq!(
            steps.parsed(),
            0,
            "ids, names and statuses are read from the lines"
        );
        assert_eq!(steps.last_with_files().map(|s| s.index), Some(2));
        assert_eq!(
            steps.parsed(),
            1,
            "only the step that lists files is parsed"
        );
        assert_eq!(steps.iter().cloned().collect::<Vec<_>>(), plan);
    }

    #[test]
    fn a_changed_step_is_written_anew_and_the_others_as_read() {
        let plan = plan();
        let read = read(&plan);
        let mut changed = read.clone();
        changed[4].status = StepStatus::Completed;
        assert_eq!(changed.parsed(), 1);
        assert!(changed != read);
        assert_eq!(read.as_read(4), (Some(StepStatus::Pending), true));
        assert_eq!(changed.as_read(4), (Some(StepStatus::Pending), false));
        assert_eq!(changed.as_read(5), (Some(StepStatus::Pending), true));

        let mut expected = plan.clone();
        expected[4].status = StepStatus::Completed;
        assert_eq!(json(&changed).as_str(), json(&expected).as_str());
        assert_eq!(
            changed.parsed(),
            1,
            "the others are written as read, unparsed"
        );
        // Any other serializer (`waymark status --json`) gets the values.
        let value = serde_json::to_value(&changed).unwrap();
        assert_eq!(value, serde_json::to_value(&expected).unwrap());

        changed.push(expected[0].clone());
        assert_eq!(changed.len(), 41);
        assert_eq!(changed.as_read(40), (None, false));
        let mut undone = read.clone();
        undone[4].status = StepStatus::Pending;
        assert!(undone == read, "a step changed back is equal again");
    }

    #[test]
    fn json_laid_out_otherwise_is_not_taken_line_by_line() {
        assert!(items("[{\"id\": \"1\"}]").is_none());
        assert!(items("[\n    {\n      \"id\": \"}\"\n    ]").is_none());
        let spaced = "[\n    {\n      \"id\": \"1\",\n      \"name\": \"One\",\n      \"index\": 0,\n      \"status\": \"failed\"\n    },\n    {\n      \"id\": \"2\",\n      \"status\": \"failed\"\n    }\n  ]";
        let found = items(spaced).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(&spaced[found[0].1.id.clone()], "\"1\"");
        assert_eq!(&spaced[found[0].1.name.clone()], "\"One\"");
        assert_eq!(found[0].1.status, Some(StepStatus::Failed));
        // A step of another shape says nothing of itself: it is parsed when asked.
        assert_eq!(&spaced[found[1].1.id.clone()], "\"2\"");
        assert_eq!(found[1].1.status, None);
    }
}
