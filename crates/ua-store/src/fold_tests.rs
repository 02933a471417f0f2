use super::*;
use serde_json::json;
use ua_protocol::conversation::ToolUse;

fn request(turn: u32, appended: Vec<Message>) -> JournalEntry {
    JournalEntry::ModelRequest {
        turn,
        call: 1,
        backend: "b".into(),
        model: "m".into(),
        system: String::new(),
        messages_appended: appended,
        omitted: vec![],
        tools: None,
        purpose: CallPurpose::Conversation,
    }
}

fn response(turn: u32, message: Message) -> JournalEntry {
    JournalEntry::ModelResponse { turn, call: 1, message, usage: None, stop: None, purpose: CallPurpose::Conversation }
}

fn calling(ids: &[&str]) -> Message {
    Message {
        role: Role::Assistant,
        content: ids
            .iter()
            .map(|id| {
                Block::ToolUse(ToolUse { id: (*id).into(), name: "shell".into(), input: json!({"command": "ls"}) })
            })
            .collect(),
    }
}

fn results(pairs: &[(&str, &str)]) -> Message {
    Message {
        role: Role::User,
        content: pairs.iter().map(|(id, out)| Block::ToolResult(ToolResult::text(*id, *out))).collect(),
    }
}

fn intent(turn: u32, id: &str) -> JournalEntry {
    JournalEntry::CommandIntent { turn, tool_use_id: id.into(), command: format!("run {id}"), read_only: false }
}

fn tool_result(turn: u32, id: &str, out: &str) -> JournalEntry {
    JournalEntry::ToolResult {
        turn,
        tool_use_id: id.into(),
        command: format!("run {id}"),
        exit_code: Some(0),
        output: out.into(),
        is_error: false,
        truncated: false,
        duration_ms: 1,
    }
}

fn summary(turn: u32, covers: u32, text: &str) -> JournalEntry {
    JournalEntry::Summary { turn, covers_through_turn: covers, text: text.into(), model: "m".into(), usage: None }
}

fn fold(entries: &[JournalEntry]) -> Rebuilt {
    let mut f = ConversationFold::default();
    for (i, e) in entries.iter().enumerate() {
        f.push(Some(i as u64 + 1), e);
    }
    f.finish()
}

fn error_result(id: &str, text: &str) -> Block {
    let mut r = ToolResult::text(id, text);
    r.is_error = true;
    Block::ToolResult(r)
}

/// Three turns; the third ended with a command whose result the next
/// request carries.
fn three_turns() -> Vec<JournalEntry> {
    vec![
        request(1, vec![Message::user_text("one")]),
        response(1, Message::assistant_text("1")),
        request(2, vec![Message::user_text("two")]),
        response(2, calling(&["a"])),
        tool_result(2, "a", "out a"),
        request(2, vec![results(&[("a", "out a")])]),
        response(2, Message::assistant_text("2")),
        request(3, vec![Message::user_text("three")]),
        response(3, calling(&["b"])),
        tool_result(3, "b", "out b"),
        // Turn 3 was stopped here; turn 4's request carries the result.
        request(4, vec![results(&[("b", "out b")]), Message::user_text("four")]),
        response(4, Message::assistant_text("4")),
    ]
}

#[test]
fn a_summary_replaces_the_turns_it_covers() {
    let mut entries = three_turns();
    entries.push(summary(4, 2, "did one and two"));
    let r = fold(&entries);
    assert_eq!(
        r.conversation,
        vec![
            summary_message("did one and two"),
            Message::user_text("three"),
            calling(&["b"]),
            results(&[("b", "out b")]),
            Message::user_text("four"),
            Message::assistant_text("4"),
        ],
        "turn 4's request carried turn 3's result: it stays with turn 3"
    );
    assert!(r.conversation[0].text().starts_with("Summary of the earlier conversation"));
    let s = r.summary.unwrap();
    assert_eq!((s.seq, s.turn, s.covers_through_turn), (Some(13), 4, 2));
    assert_eq!(r.journaled, r.conversation.len());
}

#[test]
fn a_result_of_a_summarised_call_does_not_survive_without_its_call() {
    let mut entries = three_turns();
    entries.push(summary(4, 3, "did one to three"));
    let r = fold(&entries);
    assert_eq!(
        r.conversation,
        vec![summary_message("did one to three"), Message::user_text("four"), Message::assistant_text("4")]
    );
}

#[test]
fn a_second_summary_replaces_the_first() {
    let mut entries = three_turns();
    entries.push(summary(4, 1, "first"));
    entries.push(request(5, vec![Message::user_text("five")]));
    entries.push(summary(5, 4, "second"));
    let r = fold(&entries);
    assert_eq!(r.conversation, vec![summary_message("second"), Message::user_text("five")]);
}

#[test]
fn summary_calls_stay_out_of_the_conversation() {
    let mut entries = three_turns();
    let mut call = request(4, vec![Message::user_text("summarise turns 1 to 2")]);
    let mut answer = response(4, Message::assistant_text("did one and two"));
    for e in [&mut call, &mut answer] {
        if let JournalEntry::ModelRequest { purpose, .. } | JournalEntry::ModelResponse { purpose, .. } = e {
            *purpose = CallPurpose::Summary;
        }
    }
    let before = fold(&entries).conversation;
    entries.push(call);
    entries.push(answer);
    assert_eq!(fold(&entries).conversation, before);
}

#[test]
fn a_command_started_without_an_outcome_is_unknown_and_reported() {
    let entries = vec![
        request(1, vec![Message::user_text("clean up")]),
        response(1, calling(&["a", "b", "c"])),
        intent(1, "a"),
        tool_result(1, "a", "removed"),
        intent(1, "b"),
        // unixagent stopped while b ran; c never started.
    ];
    let r = fold(&entries);
    let last = r.conversation.last().unwrap();
    assert_eq!(
        last.content,
        vec![
            Block::ToolResult(ToolResult::text("a", "removed")),
            error_result("b", OUTCOME_UNKNOWN),
            error_result("c", NOT_RUN),
        ]
    );
    assert_eq!(r.journaled, r.conversation.len() - 1, "the answer goes in the next request");
    assert_eq!(
        r.unresolved,
        vec![Intent { seq: Some(5), turn: 1, tool_use_id: "b".into(), command: "run b".into(), read_only: false }]
    );
}

#[test]
fn a_resumed_line_accounts_for_the_intents_before_it() {
    let resumed = JournalEntry::Resumed {
        pid: 1,
        version: "v".into(),
        shell: "/bin/sh".into(),
        cwd: "/".into(),
        from_checkpoint: None,
    };
    let entries =
        vec![request(1, vec![Message::user_text("go")]), response(1, calling(&["a"])), intent(1, "a"), resumed];
    let r = fold(&entries);
    assert!(r.unresolved.is_empty(), "shown when the session was resumed");
    assert_eq!(r.conversation.last().unwrap().content, vec![error_result("a", OUTCOME_UNKNOWN)]);

    // Once a request carries the synthesized result, nothing is pending.
    let mut carried = entries.clone();
    carried.truncate(3);
    carried.push(request(2, vec![Message { role: Role::User, content: vec![error_result("a", OUTCOME_UNKNOWN)] }]));
    let r = fold(&carried);
    assert!(r.unresolved.is_empty());
    assert_eq!(r.journaled, r.conversation.len());
}

#[test]
fn a_lost_request_line_still_gives_every_call_one_result() {
    // The request carrying a's result and the next instruction was lost.
    let entries = vec![
        request(1, vec![Message::user_text("go")]),
        response(1, calling(&["a"])),
        intent(1, "a"),
        tool_result(1, "a", "out"),
        response(1, calling(&["b"])),
        request(2, vec![results(&[("b", "ok"), ("zz", "stray")]), Message::user_text("next")]),
    ];
    let r = fold(&entries);
    assert_eq!(
        r.conversation,
        vec![
            Message::user_text("go"),
            calling(&["a"]),
            results(&[("a", "out")]),
            calling(&["b"]),
            results(&[("b", "ok")]),
            Message::user_text("next"),
        ]
    );
    assert!(r.unresolved.is_empty());
}

#[test]
fn pairing_leaves_a_sound_conversation_alone_and_mends_the_rest() {
    let sound = vec![
        Message::user_text("go"),
        calling(&["a", "b"]),
        results(&[("a", "1"), ("b", "2")]),
        Message::assistant_text("ok"),
    ];
    let mut m = sound.clone();
    assert!(!pair_tool_calls(&mut m, |_| unreachable!()));
    assert_eq!(m, sound);

    let mut m = vec![
        results(&[("x", "orphan")]),
        Message::user_text("go"),
        calling(&["a", "b"]),
        Message { role: Role::User, content: vec![Block::text("and"), Block::ToolResult(ToolResult::text("b", "2"))] },
        results(&[("b", "again")]),
        calling(&["c"]),
    ];
    assert!(pair_tool_calls(&mut m, |id| ToolResult::text(id, "made up")));
    assert_eq!(
        m,
        vec![
            Message::user_text("go"),
            calling(&["a", "b"]),
            Message {
                role: Role::User,
                content: vec![
                    Block::ToolResult(ToolResult::text("a", "made up")),
                    Block::ToolResult(ToolResult::text("b", "2")),
                    Block::text("and"),
                ]
            },
            calling(&["c"]),
            results(&[("c", "made up")]),
        ]
    );
}

#[test]
fn starting_with_a_summary_and_tools() {
    let s = SummaryInForce { seq: Some(4), turn: 3, covers_through_turn: 2, model: "m".into(), text: "earlier".into() };
    let mut f = ConversationFold::starting_with(Some(s.clone()), Some(vec![ua_protocol::tool::shell_tool()]));
    f.push(Some(9), &request(3, vec![Message::user_text("three")]));
    let r = f.finish();
    assert_eq!(r.conversation, vec![summary_message("earlier"), Message::user_text("three")]);
    assert_eq!(r.summary, Some(s));
    assert_eq!(r.tools, Some(vec![ua_protocol::tool::shell_tool()]));
    assert_eq!(r.last_turn, 3);
}
