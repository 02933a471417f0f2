//! Resuming a session: the conversation rebuilt from the latest checkpoint
//! equals the one rebuilt from the whole journal, however the journal or
//! its side file was damaged.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use ua_protocol::conversation::{Block, Message, Role};
use ua_protocol::journal::{JournalEntry, JournalLine, JournalPos};
use ua_protocol::tool::shell_tool;
use ua_store::checkpoint::{CHECKPOINT_FILE, write_side_file};
use ua_store::fold::{ConversationFold, NOT_RUN, OUTCOME_UNKNOWN, Rebuilt, summary_message};
use ua_store::journal::{Journal, SyncPolicy, read_journal};
use ua_store::resume::{Located, Resumed, load};
use ua_store::session::{SessionDir, SessionMeta};

use super::long_session::{Session, generate, shell_call};

fn meta() -> SessionMeta {
    SessionMeta {
        id: String::new(),
        created_ms: 0,
        pid: 1,
        shell: "/bin/bash".into(),
        cwd: "/work".into(),
        version: "0.1.0".into(),
        parent: None,
        trace_id: None,
        trace_parent: None,
        parent_command: None,
        depth: 0,
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    session: Session,
}

impl Fixture {
    fn new(tool_output: usize, user_output: usize) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(tmp.path(), meta()).unwrap();
        let journal = Journal::open(dir.journal_path(), SyncPolicy::Never).unwrap();
        let dir = dir.path().to_owned();
        Fixture { _tmp: tmp, dir, session: Session::new(journal, tool_output, user_output) }
    }

    fn journal(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
    }

    fn side(&self) -> PathBuf {
        self.dir.join(CHECKPOINT_FILE)
    }
}

/// The whole journal folded from its first line.
fn full_fold(journal: &Path) -> Rebuilt {
    let contents = read_journal(journal).unwrap();
    let mut fold = ConversationFold::default();
    for l in &contents.lines {
        fold.push(Some(l.seq), &l.entry);
    }
    fold.finish()
}

/// `load` agrees with the full fold in everything but how it read.
fn assert_same(r: &Resumed, full: &Rebuilt) {
    assert_eq!(r.conversation, full.conversation);
    assert_eq!(r.journaled, full.journaled);
    assert_eq!(r.tools, full.tools);
    assert_eq!(r.unresolved, full.unresolved);
    assert_eq!(r.summary_in_force, full.summary);
    assert_eq!(r.next_turn, full.last_turn + 1);
}

fn lines_with_offsets(journal: &Path) -> Vec<(u64, Vec<u8>)> {
    let bytes = fs::read(journal).unwrap();
    let mut out = Vec::new();
    let mut at = 0u64;
    for piece in bytes.split_inclusive(|&b| b == b'\n') {
        out.push((at, piece.to_vec()));
        at += piece.len() as u64;
    }
    out
}

fn entry_type(raw: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(raw)
        .map(|v| v["type"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default()
}

#[test]
fn without_a_summary_the_conversation_is_the_full_fold() {
    let mut f = Fixture::new(300, 300);
    for _ in 0..4 {
        f.session.turn(2).unwrap();
    }
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::SideFile);
    assert!(r.report.skipped.is_empty() && !r.report.torn_tail);
    assert_same(&r, &full_fold(&f.journal()));
    assert_eq!(r.conversation, f.session.history, "what the live session held");
    assert_eq!(r.journaled, f.session.journaled);
    assert_eq!(r.tools, Some(vec![shell_tool()]));
    assert_eq!(r.next_turn, 5);
    assert!(r.unresolved.is_empty() && r.summary_in_force.is_none());
    assert_eq!(r.meta.shell, "/bin/bash");
    assert_eq!(r.checkpoint.map(|c| c.seq), Some(f.session.journal.next_seq() - 1));
}

#[test]
fn after_a_summary_the_conversation_is_the_summary_and_the_turns_after_it() {
    let mut f = Fixture::new(300, 300);
    for _ in 0..6 {
        f.session.turn(2).unwrap();
    }
    f.session.summarise(4).unwrap();
    f.session.turn(1).unwrap();
    // A summary written in the middle of a turn, with a result pending.
    f.session.instruct("once more").unwrap();
    let id = f.session.next_id(0);
    f.session.call(shell_call(&id, "ls")).unwrap();
    f.session.intend(&id, "ls").unwrap();
    f.session.result(&id, "ls").unwrap();
    f.session.summarise(6).unwrap();
    f.session.call(Message::assistant_text("done")).unwrap();
    f.session.end_turn().unwrap();
    f.session.turn(1).unwrap();

    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::SideFile);
    assert_same(&r, &full_fold(&f.journal()));
    assert_eq!(r.conversation, f.session.history);
    assert_eq!(r.conversation[0], summary_message("The person and unixagent worked through turns 1 to 6."));
    assert_eq!(r.summary_in_force.as_ref().map(|s| s.covers_through_turn), Some(6));
    assert_eq!(r.tools, Some(vec![shell_tool()]), "found by its offset, far before the fold starts");
    assert_eq!(r.next_turn, 10);
}

#[test]
fn a_missing_or_stale_side_file_costs_a_backward_scan_not_correctness() {
    let mut f = Fixture::new(300, 300);
    for _ in 0..5 {
        f.session.turn(2).unwrap();
    }
    f.session.summarise(3).unwrap();
    f.session.turn(1).unwrap();
    // Lines after the last checkpoint, as a crash mid-turn leaves them.
    f.session.instruct("and then").unwrap();
    let full = full_fold(&f.journal());
    let good = load(&f.dir).unwrap();
    assert_same(&good, &full);

    fs::remove_file(f.side()).unwrap();
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::BackwardScan);
    assert_same(&r, &full);
    assert_eq!(r.checkpoint, good.checkpoint);

    let len = fs::metadata(f.journal()).unwrap().len();
    let checkpoint = good.checkpoint.unwrap();
    for stale in [
        JournalPos { seq: 99_999, offset: len + 10 },
        JournalPos { seq: checkpoint.seq, offset: checkpoint.offset + 1 },
        JournalPos { seq: checkpoint.seq + 1, offset: checkpoint.offset },
        JournalPos { seq: 1, offset: 0 },
    ] {
        write_side_file(&f.side(), stale).unwrap();
        let r = load(&f.dir).unwrap();
        assert_eq!(r.report.located, Located::BackwardScan, "{stale:?}");
        assert_same(&r, &full);
    }
    fs::write(f.side(), b"not json").unwrap();
    assert_eq!(load(&f.dir).unwrap().report.located, Located::BackwardScan);
}

#[test]
fn a_journal_without_checkpoints_is_read_whole() {
    let mut f = Fixture::new(200, 200);
    for _ in 0..3 {
        f.session.turn(1).unwrap();
    }
    // Drop every checkpoint line, as a journal written before they existed.
    let kept: Vec<u8> = lines_with_offsets(&f.journal())
        .into_iter()
        .filter(|(_, raw)| entry_type(raw) != "checkpoint")
        .flat_map(|(_, raw)| raw)
        .collect();
    fs::write(f.journal(), kept).unwrap();
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::FullRead);
    assert!(!r.report.used_checkpoint());
    assert_same(&r, &full_fold(&f.journal()));
    assert_eq!(r.conversation, f.session.history);
}

#[test]
fn a_torn_last_line_is_reported_and_the_writer_goes_on_from_it() {
    let mut f = Fixture::new(200, 200);
    for _ in 0..3 {
        f.session.turn(1).unwrap();
    }
    let history = f.session.history.clone();
    OpenOptions::new().append(true).open(f.journal()).unwrap().write_all(br#"{"seq":77,"ts":1,"type":"instr"#).unwrap();
    let r = load(&f.dir).unwrap();
    assert!(r.report.torn_tail);
    assert!(r.report.skipped.is_empty());
    assert_eq!(r.conversation, history);

    // Reopened, the writer closes the fragment off and its offsets stay
    // right: the next checkpoint is found through the side file.
    let journal = Journal::open(f.journal(), SyncPolicy::Never).unwrap();
    assert_eq!(journal.next_seq(), f.session.journal.next_seq());
    f.session.journal = journal;
    f.session.turn(1).unwrap();
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::SideFile);
    assert!(!r.report.torn_tail);
    assert_eq!(r.conversation, f.session.history);
    assert_same(&r, &full_fold(&f.journal()));
}

#[test]
fn a_corrupt_line_in_the_middle_is_skipped_and_reported() {
    let mut f = Fixture::new(200, 400);
    for _ in 0..3 {
        f.session.turn(1).unwrap();
    }
    // Overwrite the last user_command line in place, keeping offsets.
    let lines = lines_with_offsets(&f.journal());
    let (offset, raw) = lines.iter().rev().find(|(_, raw)| entry_type(raw) == "user_command").unwrap().clone();
    let mut bytes = fs::read(f.journal()).unwrap();
    let start = usize::try_from(offset).unwrap();
    bytes[start..start + raw.len() - 1].fill(b'#');
    fs::write(f.journal(), &bytes).unwrap();

    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.skipped.len(), 1);
    assert_eq!(r.report.skipped[0].offset, offset);
    assert!(r.report.skipped[0].to_string().contains(&format!("at byte {offset}")));
    assert_eq!(r.conversation, f.session.history);
    assert_same(&r, &full_fold(&f.journal()));
}

#[test]
fn a_command_started_without_an_outcome_is_answered_and_reported_once() {
    let mut f = Fixture::new(200, 200);
    f.session.turn(1).unwrap();
    f.session.instruct("clean the build").unwrap();
    let id = f.session.next_id(0);
    f.session.call(shell_call(&id, "rm -r build")).unwrap();
    f.session.intend(&id, "rm -r build").unwrap();
    // unixagent stops here.

    let r = load(&f.dir).unwrap();
    assert_same(&r, &full_fold(&f.journal()));
    assert_eq!(r.unresolved.len(), 1);
    assert_eq!((r.unresolved[0].command.as_str(), r.unresolved[0].read_only), ("rm -r build", false));
    let last = r.conversation.last().unwrap();
    assert_eq!(last.role, Role::User);
    let Block::ToolResult(result) = &last.content[0] else { panic!("{last:?}") };
    assert_eq!(
        (result.tool_use_id.as_str(), result.joined_text().as_str(), result.is_error),
        (id.as_str(), OUTCOME_UNKNOWN, true)
    );
    assert_eq!(r.journaled, r.conversation.len() - 1);
    assert_eq!(r.next_turn, 3);

    // The session is resumed: once the `resumed` line is down, the command
    // is not reported again, and the model is still told.
    let mut journal = Journal::open(f.journal(), SyncPolicy::Never).unwrap();
    journal
        .append(&JournalEntry::Resumed {
            pid: 2,
            version: "0.1.0".into(),
            shell: "/bin/bash".into(),
            cwd: "/work".into(),
            from_checkpoint: r.checkpoint.map(|c| c.seq),
        })
        .unwrap();
    journal.checkpoint().unwrap();
    let again = load(&f.dir).unwrap();
    assert_eq!(again.report.located, Located::SideFile);
    assert!(again.unresolved.is_empty());
    assert_eq!(again.conversation, r.conversation);
    assert_eq!(again.next_turn, 3);
}

#[test]
fn a_journal_cut_after_a_command_was_proposed_says_it_never_ran() {
    let mut f = Fixture::new(200, 200);
    f.session.turn(1).unwrap();
    f.session.instruct("build it").unwrap();
    let id = f.session.next_id(0);
    f.session.call(shell_call(&id, "make")).unwrap();
    // A full disk: half of the intent line made it.
    let len = fs::metadata(f.journal()).unwrap().len();
    f.session.intend(&id, "make").unwrap();
    let file = OpenOptions::new().write(true).open(f.journal()).unwrap();
    file.set_len(len + 20).unwrap();

    let r = load(&f.dir).unwrap();
    assert!(r.report.torn_tail);
    assert!(r.unresolved.is_empty());
    let last = r.conversation.last().unwrap();
    let Block::ToolResult(result) = &last.content[0] else { panic!("{last:?}") };
    assert_eq!((result.joined_text().as_str(), result.is_error), (NOT_RUN, true));
}

#[test]
fn a_lost_line_mid_journal_leaves_no_call_unanswered() {
    let mut f = Fixture::new(200, 200);
    f.session.turn(2).unwrap();
    f.session.turn(1).unwrap();
    // Lose the request that carried turn 1's first result.
    let lines = lines_with_offsets(&f.journal());
    let (offset, raw) = lines
        .iter()
        .find(|(_, raw)| {
            serde_json::from_slice::<JournalLine>(raw)
                .is_ok_and(|l| matches!(l.entry, JournalEntry::ModelRequest { turn: 1, call: 2, .. }))
        })
        .unwrap()
        .clone();
    let mut bytes = fs::read(f.journal()).unwrap();
    let start = usize::try_from(offset).unwrap();
    bytes[start..start + raw.len() - 1].fill(b' ');
    bytes[start] = b'!';
    fs::write(f.journal(), &bytes).unwrap();

    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.skipped.len(), 1);
    assert_same(&r, &full_fold(&f.journal()));
    // Every tool_use is followed by a user message answering exactly it.
    for (i, m) in r.conversation.iter().enumerate() {
        let calls: Vec<&str> = m.tool_uses().map(|t| t.id.as_str()).collect();
        let answered: Vec<&str> = r.conversation.get(i + 1).map_or(vec![], |n| {
            n.content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult(t) => Some(t.tool_use_id.as_str()),
                    _ => None,
                })
                .collect()
        });
        if m.role == Role::Assistant {
            assert_eq!(answered, calls, "message {i}");
        }
    }
    // The first result came from its tool_result line.
    assert!(r.conversation.iter().any(|m| {
        m.content.iter().any(|b| matches!(b, Block::ToolResult(t) if t.tool_use_id.ends_with("_1_1_0") && !t.is_error))
    }));
}

#[test]
fn a_reopened_writer_keeps_track_of_where_the_conversation_starts() {
    let mut f = Fixture::new(200, 200);
    for _ in 0..4 {
        f.session.turn(1).unwrap();
    }
    f.session.summarise(1).unwrap();
    f.session.turn(1).unwrap();
    // A new process takes over the journal; its next summary needs turn
    // 3's start, which it never wrote.
    f.session.journal = Journal::open(f.journal(), SyncPolicy::Never).unwrap();
    f.session.turn(1).unwrap();
    f.session.summarise(2).unwrap();
    f.session.turn(1).unwrap();
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::SideFile);
    assert_eq!(r.conversation, f.session.history);
    assert_same(&r, &full_fold(&f.journal()));
}

/// A 50,000-line journal of over 100 MB resumes from its last checkpoint,
/// reading a sliver of it.
#[test]
fn a_long_journal_resumes_reading_little() {
    let mut f = Fixture::new(6 * 1024, 12 * 1024);
    generate(&mut f.session, 50_000, 20).unwrap();
    let len = fs::metadata(f.journal()).unwrap().len();
    assert!(len > 100 << 20, "{len} bytes");
    assert!(f.session.journal.next_seq() > 50_000);

    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::SideFile);
    assert!(r.report.bytes_read < 2 << 20, "read {} of {len} bytes", r.report.bytes_read);
    assert_eq!(r.conversation, f.session.history);
    assert_eq!(r.tools, Some(vec![shell_tool()]));
    assert_eq!(r.next_turn, f.session.turn + 1);

    // Without the side file, the scan from the end stops at the last
    // checkpoint.
    fs::remove_file(f.side()).unwrap();
    let r = load(&f.dir).unwrap();
    assert_eq!(r.report.located, Located::BackwardScan);
    assert!(r.report.bytes_read < 2 << 20, "read {} of {len} bytes", r.report.bytes_read);
    assert_eq!(r.conversation, f.session.history);
}
