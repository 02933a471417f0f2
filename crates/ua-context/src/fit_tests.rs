use super::*;
use crate::prompt::UserCommand;
use proptest::prelude::*;
use serde_json::json;
use std::collections::HashSet;
use ua_protocol::conversation::{ToolResult, ToolUse};

/// Like ua-backend's estimate: ~3.5 characters per token plus framing.
fn estimate(m: &Message) -> u64 {
    let chars: usize = m
        .content
        .iter()
        .map(|b| match b {
            Block::Text { text } => text.chars().count(),
            Block::ToolUse(t) => t.input.to_string().len() + t.name.len(),
            Block::ToolResult(r) => r.joined_text().chars().count(),
            Block::Thinking(t) => t.text.len(),
        })
        .sum();
    4 + (chars as u64 * 2).div_ceil(7)
}

fn call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            Block::text("running"),
            Block::ToolUse(ToolUse { id: id.into(), name: "shell".into(), input: json!({"command": "ls"}) }),
        ],
    }
}

fn result(id: &str, out: &str) -> Message {
    Message { role: Role::User, content: vec![Block::ToolResult(ToolResult::text(id, out))] }
}

fn snapshot(lines: usize) -> ContextSnapshot {
    ContextSnapshot {
        cwd: "/w".into(),
        os: "linux".into(),
        shell: "/bin/sh".into(),
        env: vec![],
        recent_output_lines: (0..lines).map(|i| format!("line number {i} of the terminal")).collect(),
        user_commands: vec![],
        board: false,
        active_tasks: None,
    }
}

fn cost(f: &Fitted) -> u64 {
    estimate(&Message::user_text(f.system.as_str())) + f.messages.iter().map(estimate).sum::<u64>()
}

/// Two finished turns and a current one two exchanges deep.
fn history() -> Vec<Message> {
    vec![
        Message::user_text("first"),
        call("a"),
        result("a", &"x".repeat(400)),
        Message::assistant_text("done one"),
        Message::user_text("second"),
        Message::assistant_text("done two"),
        Message::user_text("third"),
        call("b"),
        result("b", &"y".repeat(400)),
        call("c"),
        result("c", "z"),
    ]
}

#[test]
fn everything_fits_untouched() {
    let f = fit(&snapshot(10), &history(), 1_000_000, estimate).unwrap();
    assert!(f.dropped.is_empty() && f.omitted.is_empty());
    assert_eq!(f.messages, history());
    assert_eq!(f.system, snapshot(10).system_prompt());
    assert_eq!(f.estimated_tokens, cost(&f));
}

#[test]
fn terminal_lines_go_first_and_only_as_many_as_needed() {
    let full = fit(&snapshot(100), &history(), u64::MAX, estimate).unwrap().estimated_tokens;
    let f = fit(&snapshot(100), &history(), full - 50, estimate).unwrap();
    assert!(f.dropped.terminal_lines > 0 && f.dropped.terminal_lines < 100, "{:?}", f.dropped);
    assert_eq!(f.dropped.turns, 0);
    assert_eq!(f.messages, history());
    assert!(f.system.contains(&format!("[{} earlier lines omitted", f.dropped.terminal_lines)));
    assert!(f.system.contains("line number 99 "));
    assert!(cost(&f) <= full - 50);
    // One line fewer dropped would not have fitted.
    let one_less = snapshot(100).render(Cuts { lines: f.dropped.terminal_lines - 1, outputs: 0 });
    let msgs: u64 = history().iter().map(estimate).sum();
    assert!(estimate(&Message::user_text(one_less)) + msgs > full - 50);
}

#[test]
fn then_oldest_turns_then_exchanges_of_the_current_turn() {
    let h = history();
    // The system prompt once all five terminal lines are gone.
    let base = estimate(&Message::user_text(snapshot(5).render(Cuts { lines: 5, outputs: 0 })));
    let all: u64 = h.iter().map(estimate).sum();

    let f = fit(&snapshot(5), &h, base + all - estimate(&h[0]), estimate).unwrap();
    assert_eq!(f.dropped, Dropped { terminal_lines: 5, turns: 1, exchanges: 0, command_outputs: 0 });
    assert_eq!(f.omitted, [[0, 4]]);
    assert_eq!(f.messages, h[4..].to_vec());

    let tight = base + estimate(&h[6]) + estimate(&h[9]) + estimate(&h[10]);
    let f = fit(&snapshot(5), &h, tight, estimate).unwrap();
    assert_eq!(f.dropped, Dropped { terminal_lines: 5, turns: 2, exchanges: 1, command_outputs: 0 });
    assert_eq!(f.omitted, [[0, 6], [7, 9]]);
    assert_eq!(f.messages, vec![h[6].clone(), h[9].clone(), h[10].clone()]);
}

#[test]
fn command_outputs_go_last_and_the_error_says_what_is_needed() {
    let mut s = snapshot(0);
    s.user_commands = vec![
        UserCommand { command: "make".into(), exit_code: Some(2), output: "e".repeat(2000) },
        UserCommand { command: "ls".into(), exit_code: Some(0), output: "f".repeat(2000) },
    ];
    let h = vec![Message::user_text("why?")];
    let bare = fit(&snapshot(0), &h, u64::MAX, estimate).unwrap().estimated_tokens;
    let f = fit(&s, &h, bare + 700, estimate).unwrap();
    assert_eq!(f.dropped.command_outputs, 1);
    assert!(f.system.contains("$ make\n(exit 2)\n[output omitted") && f.system.contains("ffff"));

    let err = fit(&s, &h, 10, estimate).unwrap_err();
    assert!(err.needed > 10);
    assert!(fit(&s, &h, err.needed, estimate).is_ok(), "the reported need is enough");
    assert!(err.to_string().starts_with("the instruction and its latest step need about"));
}

#[test]
fn retry_halves() {
    assert_eq!(retry_budget(100_000), 50_000);
    assert_eq!(retry_budget(1), 0);
}

#[test]
fn ranges_merge_runs() {
    assert_eq!(ranges(&[false, false, true, false, true, true, false]), [[0, 2], [3, 4], [6, 7]]);
    assert!(ranges(&[true, true]).is_empty());
}

/// A random conversation: finished turns, then a current turn that ends
/// with a user message (the state in which a model call is made).
fn arb_history() -> impl Strategy<Value = Vec<Message>> {
    let text = "[a-z ]{0,300}";
    let exchange = (1usize..3, proptest::collection::vec(text, 1..3));
    let turn = (text, proptest::collection::vec(exchange, 0..4), proptest::option::of(text));
    proptest::collection::vec(turn, 1..6).prop_map(|turns| {
        let mut h = Vec::new();
        let mut id = 0;
        let n = turns.len();
        for (t, (instruction, exchanges, answer)) in turns.into_iter().enumerate() {
            h.push(Message::user_text(instruction));
            let last = t + 1 == n;
            for (calls, outputs) in &exchanges {
                let ids: Vec<String> = (0..*calls)
                    .map(|_| {
                        id += 1;
                        format!("t{id}")
                    })
                    .collect();
                h.push(Message {
                    role: Role::Assistant,
                    content: ids
                        .iter()
                        .map(|i| Block::ToolUse(ToolUse { id: i.clone(), name: "shell".into(), input: json!({}) }))
                        .collect(),
                });
                h.push(Message {
                    role: Role::User,
                    content: ids
                        .iter()
                        .zip(outputs.iter().cycle())
                        .map(|(i, o)| Block::ToolResult(ToolResult::text(i.clone(), o.clone())))
                        .collect(),
                });
            }
            if !last {
                h.push(Message::assistant_text(answer.unwrap_or_default()));
            }
        }
        h
    })
}

fn check_pairs(messages: &[Message]) -> Result<(), TestCaseError> {
    for (i, m) in messages.iter().enumerate() {
        let uses: HashSet<&str> = m.tool_uses().map(|t| t.id.as_str()).collect();
        if !uses.is_empty() {
            let next = messages.get(i + 1);
            let answered: HashSet<&str> = next
                .map(|n| {
                    n.content
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolResult(r) => Some(r.tool_use_id.as_str()),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            prop_assert_eq!(&uses, &answered, "tool_use at {} unanswered", i);
        }
        for b in &m.content {
            if let Block::ToolResult(r) = b {
                let prev = i.checked_sub(1).map(|p| &messages[p]);
                prop_assert!(
                    prev.is_some_and(|p| p.tool_uses().any(|t| t.id == r.tool_use_id)),
                    "tool_result {} at {} has no tool_use before it",
                    r.tool_use_id,
                    i
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn fitted_prompts_stay_in_budget_and_keep_pairs(
        h in arb_history(),
        lines in 0usize..80,
        outputs in proptest::collection::vec("[a-z\n]{0,400}", 0..3),
        percent in 0u64..110,
    ) {
        let mut s = snapshot(lines);
        s.user_commands = outputs
            .into_iter()
            .map(|o| UserCommand { command: "cmd".into(), exit_code: Some(0), output: o })
            .collect();
        // A budget between nothing and a little more than everything.
        let full = fit(&s, &h, u64::MAX, estimate).unwrap().estimated_tokens;
        let budget = full * percent / 100;
        let current = h.iter().rposition(|m| m.role == Role::User && !has_tool_result(m)).unwrap();
        match fit(&s, &h, budget, estimate) {
            Ok(f) => {
                prop_assert!(cost(&f) <= budget, "{} > {}", cost(&f), budget);
                prop_assert_eq!(f.estimated_tokens, cost(&f));
                check_pairs(&f.messages)?;
                prop_assert_eq!(f.messages.first().map(|m| m.role), Some(Role::User));
                prop_assert!(f.messages.contains(&h[current]), "current instruction dropped");
                prop_assert_eq!(f.messages.last(), h.last(), "latest message dropped");
                // The omitted ranges describe exactly what was left out.
                let rebuilt: Vec<Message> = h
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !f.omitted.iter().any(|[a, b]| (*a..*b).contains(i)))
                    .map(|(_, m)| m.clone())
                    .collect();
                prop_assert_eq!(rebuilt, f.messages);
            }
            Err(e) => {
                prop_assert!(e.needed > budget);
                let f = fit(&s, &h, e.needed, estimate);
                prop_assert!(f.is_ok(), "fitting into the reported need failed");
            }
        }
    }
}
