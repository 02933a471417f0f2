//! A task: its state, its file name and what its frontmatter says.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::frontmatter::{Broken, Document, Value};

/// Where a task stands; each is a directory of the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Todo,
    Doing,
    Blocked,
    Review,
    Done,
}

impl State {
    /// Every state, in board order.
    pub const ALL: [State; 5] = [State::Todo, State::Doing, State::Blocked, State::Review, State::Done];

    /// The directory name, which is also how the CLI and NDJSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            State::Todo => "todo",
            State::Doing => "doing",
            State::Blocked => "blocked",
            State::Review => "review",
            State::Done => "done",
        }
    }

    pub fn parse(name: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The frontmatter keys unixagent reads and writes.
pub mod keys {
    pub const ID: &str = "id";
    pub const TITLE: &str = "title";
    pub const CREATED: &str = "created";
    pub const UPDATED: &str = "updated";
    pub const DEPENDS_ON: &str = "depends_on";
    pub const BLOCKED_BY: &str = "blocked_by";
    pub const ASSIGNEE: &str = "assignee";
    /// The assignee's process, so that a claim by an agent whose process is
    /// gone can be told apart from one still being worked on.
    pub const ASSIGNEE_PID: &str = "assignee_pid";
    pub const TAGS: &str = "tags";
}

/// One task as its file says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    pub id: u32,
    pub title: String,
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    pub depends_on: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_pid: Option<u32>,
    pub tags: Vec<String>,
    /// The Markdown after the frontmatter: the prompt and its acceptance
    /// criteria.
    pub body: String,
    pub path: PathBuf,
}

/// `<id>-<slug>.md` (or `<id>.md`): the id, if the name is a task's.
pub fn id_of_file_name(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".md")?;
    let digits = stem.split_once('-').map_or(stem, |(d, _)| d);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    digits.parse().ok()
}

/// The file name for a new task: `<id>-<slug>.md`, the slug made of the
/// title's letters and digits, lower case, at most 40 characters.
pub fn file_name(id: u32, title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { format!("{id}-task.md") } else { format!("{id}-{slug}.md") }
}

impl Task {
    /// Reads the task whose file is `path`, in `state`, named with `id`.
    /// The frontmatter's own `id`, when present, must agree with the name.
    pub fn from_document(doc: &Document, id: u32, state: State, path: PathBuf) -> Result<Task, Broken> {
        let line = |key: &str| doc.line_of(key).unwrap_or(1);
        let scalar = |key: &str| -> Result<Option<String>, Broken> {
            match doc.get(key) {
                None => Ok(None),
                Some(Value::Scalar(s)) if s.is_empty() => Ok(None),
                Some(Value::Scalar(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Broken { line: line(key), message: format!("`{key}` must be one line of text") }),
            }
        };
        let list = |key: &str| -> Result<Vec<String>, Broken> {
            match doc.get(key) {
                None => Ok(Vec::new()),
                Some(Value::List(items)) => Ok(items.clone()),
                Some(Value::Scalar(s)) if s.is_empty() => Ok(Vec::new()),
                // `tags: one` is a list of one, as people write it.
                Some(Value::Scalar(s)) => Ok(vec![s.clone()]),
                Some(Value::Other) => {
                    Err(Broken { line: line(key), message: format!("`{key}` must be a list: [a, b] or `- a` lines") })
                }
            }
        };
        let number = |key: &str, s: &str| -> Result<u32, Broken> {
            s.parse().map_err(|_| Broken { line: line(key), message: format!("`{key}`: {s:?} is not a task id") })
        };
        if let Some(named) = scalar(keys::ID)? {
            let own = number(keys::ID, &named)?;
            if own != id {
                let message = format!("`id` says {own} but the file name says {id}; make them agree");
                return Err(Broken { line: line(keys::ID), message });
            }
        }
        let depends_on =
            list(keys::DEPENDS_ON)?.iter().map(|d| number(keys::DEPENDS_ON, d)).collect::<Result<Vec<_>, _>>()?;
        let assignee_pid = match scalar(keys::ASSIGNEE_PID)? {
            Some(p) => Some(p.parse().map_err(|_| Broken {
                line: line(keys::ASSIGNEE_PID),
                message: format!("`assignee_pid`: {p:?} is not a process id"),
            })?),
            None => None,
        };
        let title = match scalar(keys::TITLE)? {
            Some(t) => t,
            // A hand-made file without a title: its name says what it is.
            None => path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.split_once('-'))
                .map_or_else(String::new, |(_, slug)| slug.replace('-', " ")),
        };
        Ok(Task {
            id,
            title,
            state,
            created: scalar(keys::CREATED)?,
            updated: scalar(keys::UPDATED)?,
            depends_on,
            blocked_by: scalar(keys::BLOCKED_BY)?,
            assignee: scalar(keys::ASSIGNEE)?,
            assignee_pid,
            tags: list(keys::TAGS)?,
            body: doc.body().to_string(),
            path,
        })
    }

    /// The file name (`<id>-<slug>.md`).
    pub fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// A list of ids as frontmatter.
pub fn id_list(ids: &[u32]) -> Value {
    Value::List(ids.iter().map(u32::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids() {
        assert_eq!(file_name(3, "Fix the parser: errors & all!"), "3-fix-the-parser-errors-all.md");
        assert_eq!(file_name(12, "☃"), "12-task.md");
        assert_eq!(file_name(1, &"x".repeat(100)).len(), "1-.md".len() + 40);
        assert_eq!(id_of_file_name("3-fix.md"), Some(3));
        assert_eq!(id_of_file_name("42.md"), Some(42));
        for bad in ["fix.md", "3-fix.txt", "-3.md", "03-x.md", ".3-x.md", "3x-y.md", "99999999999-x.md"] {
            assert_eq!(id_of_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_task_reads_its_frontmatter() {
        let doc = Document::parse(
            "---\nid: 4\ntitle: Write docs\ndepends_on: [1, 2]\nassignee: s-1\nassignee_pid: 99\ntags: docs\n---\nDo it.\n",
        )
        .unwrap();
        let t = Task::from_document(&doc, 4, State::Doing, "/b/doing/4-write-docs.md".into()).unwrap();
        assert_eq!((t.id, t.title.as_str(), t.state), (4, "Write docs", State::Doing));
        assert_eq!(t.depends_on, [1, 2]);
        assert_eq!((t.assignee.as_deref(), t.assignee_pid), (Some("s-1"), Some(99)));
        assert_eq!(t.tags, ["docs"]);
        assert_eq!(t.body, "Do it.\n");
    }

    #[test]
    fn wrong_known_values_name_their_line() {
        let check = |text: &str, line: usize, words: &str| {
            let doc = Document::parse(text).unwrap();
            let e = Task::from_document(&doc, 4, State::Todo, "/b/todo/4-x.md".into()).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e:?}");
            assert!(e.message.contains(words), "{text}: {e:?}");
        };
        check("---\ntitle: a\nid: 5\n---\n", 3, "file name says 4");
        check("---\nid: 4\ndepends_on: [1, two]\n---\n", 3, "not a task id");
        check("---\ntitle: |\n  multi\n---\n", 2, "one line of text");
        check("---\ntags:\n  a: b\n---\n", 2, "must be a list");
        check("---\nassignee_pid: me\n---\n", 2, "not a process id");
    }

    #[test]
    fn a_hand_made_file_without_a_title_is_named_by_its_slug() {
        let doc = Document::parse("---\n---\nbody\n").unwrap();
        let t = Task::from_document(&doc, 9, State::Todo, "/b/todo/9-tidy-up.md".into()).unwrap();
        assert_eq!(t.title, "tidy up");
    }
}
