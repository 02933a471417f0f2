use serde_json::json;
use ua_protocol::conversation::{Block, Message, Role, ToolUse};
use ua_protocol::event::{StopReason, StreamEvent};
use ua_protocol::tool::OutputMode;

use super::*;

fn shell_call(id: &str, command: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolUse { id: id.into(), name: "shell".into(), input: json!({ "command": command }) })
}

fn verdict(outcome: Outcome) -> Verdict {
    Verdict {
        outcome,
        risk: "write".into(),
        reason: "the default mode asks".into(),
        note: None,
        strong: false,
        rewritten: None,
        defines: Vec::new(),
    }
}

fn start() -> Turn {
    let (turn, effects) = Turn::start(Vec::new(), vec![Block::text("list files")], Limits::default());
    assert_eq!(effects, vec![Effect::Call]);
    turn
}

/// Streams an answer made of `events` and a stop.
fn answer(turn: &mut Turn, events: Vec<StreamEvent>) -> Vec<Effect> {
    let mut effects = Vec::new();
    for e in events {
        effects.extend(turn.event(e));
    }
    effects.extend(turn.event(StreamEvent::Stop(StopReason::ToolUse)));
    effects.extend(turn.stream_ended(Ok(())));
    effects
}

fn proposal(id: &str, command: &str) -> Proposal {
    Proposal { id: id.into(), command: command.into(), mode: OutputMode::Full }
}

/// The tool results of the last user message, as (id, text, is_error).
fn last_results(turn: &Turn) -> Vec<(String, String, bool)> {
    let Some(last) = turn.messages().last() else { return Vec::new() };
    assert_eq!(last.role, Role::User);
    last.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult(r) => Some((r.tool_use_id.clone(), r.joined_text(), r.is_error)),
            _ => None,
        })
        .collect()
}

/// Every tool_use is answered by exactly one tool_result in the next message.
fn assert_valid(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        let ids: Vec<&str> = m.tool_uses().map(|t| t.id.as_str()).collect();
        if ids.is_empty() {
            continue;
        }
        let next = &messages[i + 1];
        let mut answered: Vec<&str> = next
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        answered.sort_unstable();
        let mut wanted = ids.clone();
        wanted.sort_unstable();
        assert_eq!(answered, wanted, "message {i}'s tool calls are not all answered");
    }
    for pair in messages.windows(2) {
        assert!(!(pair[0].role == Role::Assistant && pair[1].role == Role::Assistant), "two model answers in a row");
    }
}

#[test]
fn text_only_answer_ends_the_turn() {
    let mut turn = start();
    let effects = answer(&mut turn, vec![StreamEvent::TextDelta("Hello".into()), StreamEvent::TextDelta(".".into())]);
    assert_eq!(effects, vec![Effect::Text("Hello".into()), Effect::Text(".".into()), Effect::Done(End::Answered)]);
    let messages = turn.into_messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].text(), "Hello.");
}

#[test]
fn approved_command_runs_and_its_result_goes_back() {
    let mut turn = start();
    let effects = answer(&mut turn, vec![StreamEvent::TextDelta("Listing.".into()), shell_call("t1", "ls")]);
    assert_eq!(effects.last(), Some(&Effect::Gate(proposal("t1", "ls"))));
    assert_eq!(turn.verdict(verdict(Outcome::Ask)), vec![Effect::Ask(proposal("t1", "ls"), verdict(Outcome::Ask))]);
    assert!(turn.is_asking());
    assert_eq!(turn.answer(Answer::Run), vec![Effect::Run(proposal("t1", "ls"), verdict(Outcome::Ask))]);
    assert!(turn.is_running());
    assert_eq!(turn.command_done(0, "exit status: 0\na\nb".into()), vec![Effect::Call]);
    assert_eq!(last_results(&turn), vec![("t1".into(), "exit status: 0\na\nb".into(), false)]);
    assert_eq!(turn.steps(), 1);
    assert_eq!(turn.last_exit(), Some(0));
    let effects = answer(&mut turn, vec![StreamEvent::TextDelta("Done.".into())]);
    assert_eq!(effects.last(), Some(&Effect::Done(End::Answered)));
    assert_valid(turn.messages());
}

#[test]
fn allowed_commands_run_without_asking_and_denied_ones_are_reported() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "ls"), shell_call("b", "rm -rf /")]);
    let effects = turn.verdict(verdict(Outcome::Allow));
    assert!(matches!(effects.as_slice(), [Effect::Run(p, _)] if p.command == "ls"));
    assert_eq!(turn.command_done(0, "exit status: 0".into()), vec![Effect::Gate(proposal("b", "rm -rf /"))]);
    let mut deny = verdict(Outcome::Deny);
    deny.reason = "deny list: rm-root".into();
    let effects = turn.verdict(deny);
    assert_eq!(effects, vec![Effect::Notice("denied: deny list: rm-root".into()), Effect::Call]);
    let results = last_results(&turn);
    assert_eq!(results[0], ("a".into(), "exit status: 0".into(), false));
    assert_eq!(results[1].0, "b");
    assert!(results[1].1.contains("denied") && results[1].1.contains("rm-root") && results[1].2);
}

#[test]
fn a_failing_command_stops_the_queue() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "make"), shell_call("b", "make install"), shell_call("c", "ls")]);
    turn.verdict(verdict(Outcome::Allow));
    let effects = turn.command_done(2, "exit status: 2\nerror".into());
    assert_eq!(effects, vec![Effect::Call]);
    let results = last_results(&turn);
    assert_eq!(results.len(), 3);
    assert_eq!(results[0], ("a".into(), "exit status: 2\nerror".into(), true));
    for r in &results[1..] {
        assert!(r.1.contains("earlier command failed with exit status 2"), "{r:?}");
    }
    assert_eq!(turn.last_exit(), Some(2));
    assert_valid(turn.messages());
}

#[test]
fn skip_moves_on_and_quit_answers_every_call() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "ls"), shell_call("b", "pwd"), shell_call("c", "id")]);
    turn.verdict(verdict(Outcome::Ask));
    let effects = turn.answer(Answer::Skip);
    assert_eq!(effects, vec![Effect::Notice("skipped".into()), Effect::Gate(proposal("b", "pwd"))]);
    turn.verdict(verdict(Outcome::Ask));
    assert_eq!(turn.answer(Answer::Quit), vec![Effect::Done(End::Stopped)]);
    let results = last_results(&turn);
    assert_eq!(results.len(), 3);
    assert!(results[0].1.contains("skipped"));
    assert!(results[1].1.contains("ended the turn") && results[2].1.contains("ended the turn"));
    assert!(turn.is_finished());
    assert_valid(turn.messages());
}

#[test]
fn edit_is_gated_again_and_runs_the_edited_command() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "rm *.log")]);
    turn.verdict(verdict(Outcome::Ask));
    let effects = turn.answer(Answer::Edit("rm -i *.log".into()));
    assert_eq!(effects, vec![Effect::Gate(proposal("a", "rm -i *.log"))]);
    let effects = turn.verdict(verdict(Outcome::Allow));
    assert!(matches!(effects.as_slice(), [Effect::Run(p, _)] if p.command == "rm -i *.log" && p.id == "a"));
}

#[test]
fn steering_drops_the_rest_and_calls_again_with_the_new_text() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "rm a"), shell_call("b", "rm b")]);
    turn.verdict(verdict(Outcome::Ask));
    assert_eq!(turn.answer(Answer::Steer("keep the newest".into())), vec![Effect::Call]);
    let last = turn.messages().last().cloned();
    let Some(last) = last else { panic!("no messages") };
    assert_eq!(last.text(), "keep the newest");
    assert_eq!(last_results(&turn).len(), 2);
    assert!(turn.is_streaming());
    assert_eq!(turn.calls(), 2);
    assert_valid(turn.messages());
}

#[test]
fn cancel_at_every_phase_keeps_the_conversation_valid() {
    // While streaming: partial text is kept, a half-built call is not.
    let mut turn = start();
    turn.event(StreamEvent::TextDelta("Let me".into()));
    turn.event(shell_call("a", "ls"));
    assert_eq!(turn.cancel(), vec![Effect::Done(End::Stopped)]);
    let messages = turn.into_messages();
    assert_eq!(messages.last().map(|m| m.text()), Some("Let me".to_string()));
    assert_valid(&messages);

    // While asking and while running.
    for run_first in [false, true] {
        let mut turn = start();
        answer(&mut turn, vec![shell_call("a", "sleep 100"), shell_call("b", "ls")]);
        turn.verdict(verdict(Outcome::Ask));
        if run_first {
            turn.answer(Answer::Run);
        }
        assert_eq!(turn.cancel(), vec![Effect::Done(End::Stopped)]);
        assert_eq!(last_results(&turn).len(), 2);
        assert_valid(turn.messages());
        // Late reports after the end change nothing.
        assert!(turn.command_done(130, String::new()).is_empty());
        assert!(turn.cancel().is_empty());
    }
}

#[test]
fn failed_stream_ends_the_turn_with_the_message() {
    let mut turn = start();
    turn.event(StreamEvent::TextDelta("part".into()));
    let effects = turn.stream_ended(Err("the model's server is overloaded".into()));
    assert_eq!(effects, vec![Effect::Done(End::Failed("the model's server is overloaded".into()))]);
}

#[test]
fn unknown_tools_and_bad_input_are_answered_without_asking() {
    let mut turn = start();
    let bad = StreamEvent::ToolCall(ToolUse { id: "x".into(), name: "shell".into(), input: json!({"cmd": 1}) });
    let other = StreamEvent::ToolCall(ToolUse { id: "y".into(), name: "browser".into(), input: json!({}) });
    let effects = answer(&mut turn, vec![bad, other]);
    assert_eq!(effects, vec![Effect::Call]);
    let results = last_results(&turn);
    assert!(results[0].1.contains("invalid input") && results[0].2);
    assert!(results[1].1.contains("unknown tool 'browser'"));
}

#[test]
fn the_step_limit_ends_the_turn() {
    let (mut turn, _) = Turn::start(Vec::new(), vec![Block::text("loop")], Limits { max_steps: 2 });
    for i in 0..2 {
        answer(&mut turn, vec![shell_call(&format!("c{i}"), "true")]);
        turn.verdict(verdict(Outcome::Allow));
        assert_eq!(turn.command_done(0, String::new()), vec![Effect::Call]);
    }
    let effects = answer(&mut turn, vec![shell_call("c2", "true")]);
    assert_eq!(effects, vec![Effect::Done(End::StepLimit)]);
    assert!(last_results(&turn)[0].1.contains("step limit"));
    assert_valid(turn.messages());
}

#[test]
fn a_new_instruction_after_a_stopped_turn_is_appended_not_merged() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "ls")]);
    turn.verdict(verdict(Outcome::Ask));
    turn.answer(Answer::Quit);
    let history = turn.into_messages();
    let (turn, _) = Turn::start(history, vec![Block::text("try again")], Limits::default());
    assert_valid(turn.messages());
    // instruction, answer with the call, its result, the new instruction:
    // earlier messages are never changed, so the journal's fold stays exact.
    assert_eq!(turn.messages().len(), 4);
    assert_eq!(turn.messages()[3].text(), "try again");
}

#[test]
fn usage_adds_up_over_calls() {
    let mut turn = start();
    let usage = |i, o| {
        StreamEvent::Usage(ua_protocol::event::Usage { input_tokens: i, output_tokens: o, ..Default::default() })
    };
    answer(&mut turn, vec![usage(100, 10), shell_call("a", "ls")]);
    turn.verdict(verdict(Outcome::Allow));
    turn.command_done(0, String::new());
    answer(&mut turn, vec![usage(150, 20)]);
    assert_eq!(turn.usage().input_tokens, 250);
    assert_eq!(turn.usage().output_tokens, 30);
}

#[test]
fn a_hook_rewrite_runs_the_rewritten_command() {
    let mut turn = start();
    answer(&mut turn, vec![shell_call("a", "rm -rf build")]);
    let mut v = verdict(Outcome::Allow);
    v.rewritten = Some(Rewritten { from: "rm -rf build".into(), command: "rm -rf ./build".into(), by_hook: true });
    let effects = turn.verdict(v);
    assert!(matches!(effects.as_slice(), [Effect::Run(p, _)] if p.command == "rm -rf ./build" && p.id == "a"));
}

fn cut_call(id: &str) -> StreamEvent {
    StreamEvent::TruncatedToolCall(ua_protocol::event::TruncatedCall {
        id: id.into(),
        name: "shell".into(),
        partial_input: r#"{"command": "cat > notes.txt <<'EOF'\nline one\nli"#.into(),
    })
}

/// Streams an answer the output limit cut off.
fn cut_answer(turn: &mut Turn, events: Vec<StreamEvent>) -> Vec<Effect> {
    let mut effects = Vec::new();
    for e in events {
        effects.extend(turn.event(e));
    }
    effects.extend(turn.event(StreamEvent::Stop(StopReason::MaxTokens)));
    effects.extend(turn.stream_ended(Ok(())));
    effects
}

fn is_cut_notice(e: &Effect) -> bool {
    matches!(e, Effect::Notice(n) if n.contains("cut off at the token limit") && n.contains("dropped"))
}

#[test]
fn a_tool_call_cut_off_at_the_token_limit_is_dropped_and_the_model_is_told() {
    let mut turn = start();
    let effects = cut_answer(&mut turn, vec![StreamEvent::TextDelta("Writing the notes.".into()), cut_call("t1")]);
    assert_eq!(effects.len(), 3, "{effects:?}");
    assert_eq!(effects[0], Effect::Text("Writing the notes.".into()));
    assert!(is_cut_notice(&effects[1]), "{effects:?}");
    assert_eq!(effects[2], Effect::Call);
    assert!(turn.is_streaming());
    let messages = turn.messages();
    // instruction, the answer's text (no half-formed tool_use), the note.
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1].role, Role::Assistant);
    assert_eq!(messages[1].content, vec![Block::text("Writing the notes.")]);
    assert_eq!(messages[2], Message::user_text(CUT_OFF_NOTE));
    assert_valid(messages);

    // The shorter answer runs as usual and the note is not repeated.
    answer(&mut turn, vec![shell_call("t2", "echo one > notes.txt")]);
    turn.verdict(verdict(Outcome::Allow));
    assert_eq!(turn.command_done(0, "exit status: 0".into()), vec![Effect::Call]);
    let last = turn.messages().last().cloned().unwrap_or_else(|| Message::user_text(""));
    assert_eq!(last.text(), "", "the note went with the cut answer only");
    assert_valid(turn.messages());
}

#[test]
fn whole_calls_before_the_cut_one_run_and_the_note_follows_their_results() {
    let mut turn = start();
    let effects = cut_answer(&mut turn, vec![shell_call("a", "mkdir out"), cut_call("b")]);
    assert_eq!(effects.len(), 2, "{effects:?}");
    assert!(is_cut_notice(&effects[0]));
    assert_eq!(effects[1], Effect::Gate(proposal("a", "mkdir out")));
    turn.verdict(verdict(Outcome::Allow));
    assert_eq!(turn.command_done(0, "exit status: 0".into()), vec![Effect::Call]);
    let Some(last) = turn.messages().last().cloned() else { panic!("no messages") };
    // Tool results first (Anthropic requires it), then the note.
    assert!(matches!(&last.content[0], Block::ToolResult(r) if r.tool_use_id == "a"));
    assert_eq!(last.content[1], Block::text(CUT_OFF_NOTE));
    assert_eq!(last.content.len(), 2);
    // Only the whole call is in the answer.
    let answer = &turn.messages()[1];
    assert_eq!(answer.tool_uses().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a"]);
    assert_valid(turn.messages());
}

#[test]
fn answers_cut_off_again_and_again_end_the_turn() {
    let mut turn = start();
    for i in 0..2 {
        let effects = cut_answer(&mut turn, vec![cut_call(&format!("c{i}"))]);
        assert_eq!(effects.last(), Some(&Effect::Call), "{i}: {effects:?}");
    }
    let effects = cut_answer(&mut turn, vec![cut_call("c2")]);
    let Some(Effect::Done(End::Failed(message))) = effects.last() else { panic!("{effects:?}") };
    assert!(message.contains("cut off at the token limit 3 times") && message.contains("max_tokens"), "{message}");
    assert!(turn.is_finished());
    assert_valid(turn.messages());
    // Nothing of the cut calls entered the conversation.
    assert!(turn.messages().iter().all(|m| m.tool_uses().next().is_none()));
}

#[test]
fn a_plain_text_answer_cut_off_just_says_so() {
    let mut turn = start();
    let effects = cut_answer(&mut turn, vec![StreamEvent::TextDelta("A long expla".into())]);
    assert_eq!(
        effects,
        vec![
            Effect::Text("A long expla".into()),
            Effect::Notice("the answer was cut off at the token limit".into()),
            Effect::Done(End::Answered),
        ]
    );
}

#[test]
fn a_run_exits_non_zero_unless_the_turn_finished() {
    assert_eq!(End::Answered.exit_status(None), 0);
    assert_eq!(End::Answered.exit_status(Some(7)), 7);
    // A model error after a command that succeeded is still a failure.
    assert_eq!(End::Failed("overloaded".into()).exit_status(Some(0)), 1);
    assert_eq!(End::Failed("overloaded".into()).exit_status(None), 1);
    assert_eq!(End::Failed("overloaded".into()).exit_status(Some(3)), 3);
    assert_eq!(End::StepLimit.exit_status(Some(0)), 1);
    assert_eq!(End::Stopped.exit_status(Some(0)), 130);
}

#[test]
fn every_proposal_settles_once_with_its_status() {
    let mut t = start();
    answer(
        &mut t,
        vec![
            shell_call("t1", "ls"),
            shell_call("t2", "rm x"),
            shell_call("t3", "touch y"),
            shell_call("t4", "make"),
            shell_call("t5", "echo never"),
        ],
    );
    t.verdict(verdict(Outcome::Allow));
    t.command_done(0, "exit status: 0".into());
    t.verdict(verdict(Outcome::Deny));
    t.verdict(verdict(Outcome::Ask));
    t.answer(Answer::Skip);
    t.verdict(verdict(Outcome::Allow));
    t.command_done(2, "exit status: 2".into());
    let settled = t.take_settled();
    let got: Vec<(&str, Option<i32>, CommandStatus)> =
        settled.iter().map(|s| (s.id.as_str(), s.exit_code, s.status)).collect();
    assert_eq!(
        got,
        [
            ("t1", Some(0), CommandStatus::Ok),
            ("t2", None, CommandStatus::Denied),
            ("t3", None, CommandStatus::Skipped),
            ("t4", Some(2), CommandStatus::Failed),
            ("t5", None, CommandStatus::Skipped),
        ]
    );
    assert!(settled[4].output.contains("an earlier command failed"));
    assert!(t.take_settled().is_empty());
}

#[test]
fn a_cancel_while_running_settles_as_interrupted() {
    let mut t = start();
    answer(&mut t, vec![shell_call("t1", "sleep 9"), shell_call("t2", "ls")]);
    t.verdict(verdict(Outcome::Allow));
    t.cancel();
    let got: Vec<(String, CommandStatus)> = t.take_settled().into_iter().map(|s| (s.id, s.status)).collect();
    assert_eq!(got, [("t1".into(), CommandStatus::Interrupted), ("t2".into(), CommandStatus::Skipped)]);
}
