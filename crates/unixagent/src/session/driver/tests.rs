//! Whole turns through the driver, with no terminal and no PTY: a fake
//! model answers each call with a scripted stream, a fake shell answers
//! each command with a scripted outcome, and the policy is the real one,
//! loaded from a throwaway home.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use ua_backend::provider::{EventStream, Fallback, Provider, Request};
use ua_protocol::agent::{AgentEvent, CommandStatus};
use ua_protocol::conversation::{Block, Role, ToolUse};
use ua_protocol::event::{StopReason, StreamEvent};

use super::*;
use crate::agent::ConfirmMode;
use crate::agent::gate::{JudgeSettings, Policy};
use crate::agent::turn::{End, Limits};
use crate::session::executor::Finished;
use crate::session::outbox::{Out, ShellOp, TurnEnd};

/// One model call's answer: its events, and whether the stream then ends
/// (or stays open, as an answer still coming).
struct Answer {
    events: Vec<StreamEvent>,
    ends: bool,
}

/// A model that answers each call with the next scripted answer, and keeps
/// every request it was sent.
#[derive(Debug)]
struct FakeModel {
    answers: Mutex<VecDeque<Vec<StreamEvent>>>,
    open: Mutex<VecDeque<bool>>,
    requests: Mutex<Vec<Request>>,
    window: u64,
}

impl Provider for FakeModel {
    fn name(&self) -> &str {
        "fake"
    }

    fn model(&self) -> &str {
        "fake-model"
    }

    fn stream(&self, request: &Request) -> EventStream {
        self.requests.lock().expect("requests").push(request.clone());
        let events = self.answers.lock().expect("answers").pop_front().expect("a scripted answer for every call");
        let ends = self.open.lock().expect("open").pop_front().unwrap_or(true);
        let events = futures_util::stream::iter(events.into_iter().map(Ok));
        if ends { Box::pin(events) } else { Box::pin(events.chain(futures_util::stream::pending())) }
    }

    fn context_window(&self) -> u64 {
        self.window
    }

    fn max_tokens(&self) -> u32 {
        1024
    }
}

/// How the fake shell answers the next command it is asked to run.
enum Ran {
    /// It ran and exited with this status, printing this.
    Exit(i32, &'static str),
    /// It ran past the command timeout and was interrupted.
    TimedOut(&'static str),
    /// It is still running.
    Hangs,
}

/// The driver with a fake model and a fake shell, and what came out.
struct Harness {
    driver: Driver,
    out: Outbox,
    model: Arc<FakeModel>,
    /// Outcomes for the commands to come.
    outcomes: VecDeque<Ran>,
    /// Commands typed into the shell, in order.
    typed: Vec<String>,
    /// What else the shell executor was asked (interrupts, pauses).
    ops: Vec<ShellOp>,
    events: Vec<AgentEvent>,
    /// Commands opened in the editor.
    edits: Vec<String>,
    ended: Vec<TurnEnd>,
    work: std::path::PathBuf,
    _home: tempfile::TempDir,
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta(t.into())
}

fn shell(id: &str, command: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolUse { id: id.into(), name: "shell".into(), input: json!({ "command": command }) })
}

/// An answer that ends after `events`.
fn answer(mut events: Vec<StreamEvent>) -> Answer {
    let stop = if events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))) {
        StopReason::ToolUse
    } else {
        StopReason::EndTurn
    };
    events.push(StreamEvent::Stop(stop));
    Answer { events, ends: true }
}

/// A message's tool results, as (text, is_error).
fn tool_results(m: &ua_protocol::conversation::Message) -> Vec<(String, bool)> {
    m.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult(r) => Some((r.joined_text(), r.is_error)),
            _ => None,
        })
        .collect()
}

impl Harness {
    fn new(mode: ConfirmMode, answers: Vec<Answer>) -> Self {
        Self::with_window(mode, answers, 200_000)
    }

    fn with_window(mode: ConfirmMode, answers: Vec<Answer>, window: u64) -> Self {
        let home = tempfile::tempdir().expect("a home");
        let work = home.path().join("work");
        std::fs::create_dir_all(&work).expect("a working directory");
        let dir = home.path().to_path_buf();
        let env = move |k: &str| match k {
            "HOME" => Some(dir.display().to_string()),
            "XDG_CONFIG_HOME" => Some(dir.join("config").display().to_string()),
            "XDG_DATA_HOME" => Some(dir.join("data").display().to_string()),
            _ => None,
        };
        let judge = JudgeSettings { mode: Some("off".into()), min_risk: None };
        let (policy, warnings) = Policy::load_from(&env, &judge, &[]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let model = Arc::new(FakeModel {
            open: Mutex::new(answers.iter().map(|a| a.ends).collect()),
            answers: Mutex::new(answers.into_iter().map(|a| a.events).collect()),
            requests: Mutex::new(Vec::new()),
            window,
        });
        let chain = Fallback::new(vec![model.clone() as Arc<dyn Provider>]).expect("a chain");
        let opts = TurnOptions {
            limits: Limits::default(),
            include_env: Vec::new(),
            terminal_lines: 0,
            pricing: Default::default(),
            telemetry: Default::default(),
            shell: "/bin/bash".into(),
        };
        let mut driver = Driver::new(
            opts,
            ModelCall::new(Default::default(), None).with_provider(Arc::new(chain)),
            Gatekeeper::new(mode, judge, Vec::new()).with_policy(policy),
            Records::new("test".into(), None, None),
        );
        driver.set_can_ask(true);
        Self {
            driver,
            out: Outbox::default(),
            model,
            outcomes: VecDeque::new(),
            typed: Vec::new(),
            ops: Vec::new(),
            events: Vec::new(),
            edits: Vec::new(),
            ended: Vec::new(),
            work,
            _home: home,
        }
    }

    /// Carries out what the driver asked for, as the event loop would,
    /// with the fake shell answering commands.
    fn carry_out(&mut self) {
        while let Some(out) = self.out.pop() {
            match out {
                Out::Event(e) => self.events.push(e),
                Out::Chrome(_) => {}
                Out::Shell(ShellOp::Run(p)) => self.run(p),
                Out::Shell(op) => self.ops.push(op),
                Out::Edit(command) => self.edits.push(command),
                Out::TurnEnded(end) => self.ended.push(end),
            }
        }
    }

    fn run(&mut self, p: Proposal) {
        self.driver.command_typed(&p, &mut self.out);
        self.typed.push(p.command.clone());
        let (exit_code, output, timed_out) = match self.outcomes.pop_front().expect("an outcome for every command") {
            Ran::Exit(code, output) => (code, output.to_string(), false),
            Ran::TimedOut(output) => {
                (130, format!("{output}\n[interrupted by unixagent: still running after 300 s]"), true)
            }
            Ran::Hangs => {
                self.driver.command_started();
                return;
            }
        };
        self.driver.command_started();
        let f = Finished {
            proposal: p,
            exit_code,
            output,
            truncated: false,
            timed_out,
            duration: Duration::from_millis(5),
            ends_line: true,
        };
        let cwd = self.work.display().to_string();
        self.driver.command_finished(f, || cwd, &mut self.out);
    }

    /// Gives the driver an instruction typed at the prompt.
    fn instruction(&mut self, text: &str) {
        let cwd = self.work.display().to_string();
        let context = |_lines| TurnContext { cwd, shell: "/bin/bash".into(), markers: true, ..TurnContext::default() };
        self.driver.instruction(text, context, &mut self.out);
        self.carry_out();
    }

    /// Takes in what the driver waits for until it waits for nothing (the
    /// model's answers, gate decisions), with a deadline.
    async fn settle(&mut self) {
        while self.driver.waiting() {
            self.step().await;
        }
    }

    /// Takes in the next thing the driver waits for.
    async fn step(&mut self) {
        let wake = tokio::time::timeout(Duration::from_secs(20), self.driver.wake())
            .await
            .expect("the driver woke within 20 s");
        self.driver.on_wake(wake, &mut self.out);
        self.carry_out();
    }

    fn keys(&mut self, keys: &str) {
        for c in keys.chars() {
            let key = match c {
                '\r' => Key::Enter,
                '\x7f' => Key::Backspace,
                '\x1b' => Key::Esc,
                '\x03' => Key::Ctrl('c'),
                c => Key::Char(c),
            };
            self.driver.input(Input::Key(key), &mut self.out);
            self.carry_out();
        }
    }

    fn input(&mut self, input: Input) {
        self.driver.input(input, &mut self.out);
        self.carry_out();
    }

    fn requests(&self) -> Vec<Request> {
        self.model.requests.lock().expect("requests").clone()
    }

    /// The tool results the last request carried, as (text, is_error).
    fn results(&self) -> Vec<(String, bool)> {
        let requests = self.requests();
        requests.last().and_then(|r| r.messages.last()).map(tool_results).unwrap_or_default()
    }

    fn statuses(&self) -> Vec<CommandStatus> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::CommandResult { status, .. } => Some(*status),
                _ => None,
            })
            .collect()
    }

    fn questions(&self) -> Vec<(String, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ApprovalRequest { command, risk, .. } => Some((command.clone(), risk.clone())),
                _ => None,
            })
            .collect()
    }

    fn notices(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Notice { text } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    fn end(&self) -> &TurnEnd {
        self.ended.last().expect("the turn ended")
    }
}

#[tokio::test]
async fn an_approved_command_runs_and_the_model_hears_its_output() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![text("Making notes."), shell("c1", "touch notes.txt")]), answer(vec![text("Done.")])],
    );
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.instruction("make notes");
    t.settle().await;
    assert_eq!(t.questions(), [("touch notes.txt".to_string(), "write".to_string())]);
    assert!(t.typed.is_empty(), "nothing runs before the answer");
    t.keys("y");
    t.settle().await;
    assert_eq!(t.typed, ["touch notes.txt"]);
    assert_eq!(t.statuses(), [CommandStatus::Ok]);
    let results = t.results();
    assert!(results.len() == 1 && results[0].0.contains("exit status: 0") && !results[0].1, "{results:?}");
    assert_eq!((&t.end().end, t.end().status, t.end().steps), (&End::Answered, 0, 1));
}

#[tokio::test]
async fn a_read_only_command_runs_without_a_question() {
    let mut t = Harness::new(ConfirmMode::Auto, vec![answer(vec![shell("c1", "ls")]), answer(vec![text("Empty.")])]);
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.instruction("what is here");
    t.settle().await;
    assert!(t.questions().is_empty());
    assert_eq!(t.typed, ["ls"]);
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn a_skip_and_a_refused_approval_run_nothing_and_the_model_hears_why() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![shell("c1", "touch a.txt"), shell("c2", "touch b.txt")]), answer(vec![text("Nothing ran.")])],
    );
    t.instruction("make two files");
    t.settle().await;
    // The person skips the first at the keyboard; an approver program
    // refuses the second over NDJSON.
    t.keys("n");
    t.settle().await;
    assert_eq!(t.driver.asking_id().as_deref(), Some("c2"));
    t.input(Input::Answer(crate::agent::turn::Answer::Deny("the approver said no".into())));
    t.settle().await;
    assert!(t.typed.is_empty());
    assert_eq!(t.statuses(), [CommandStatus::Skipped, CommandStatus::Denied]);
    let results: Vec<String> = t.results().into_iter().map(|r| r.0).collect();
    assert_eq!(results, ["not run: the user skipped this command", "not run: denied (write): the approver said no"]);
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn an_edited_command_is_gated_again_and_runs_as_edited() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![shell("c1", "touch notes.txt")]), answer(vec![text("Edited and done.")])],
    );
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.instruction("make notes");
    t.settle().await;
    t.keys("e");
    assert_eq!(t.edits, ["touch notes.txt"]);
    t.input(Input::Edited(Some(Ok("touch other.txt\n".into()))));
    t.settle().await;
    // Gated again: a write asks again, about the edit.
    assert_eq!(t.questions().last().map(|q| q.0.as_str()), Some("touch other.txt"));
    t.keys("y");
    t.settle().await;
    assert_eq!(t.typed, ["touch other.txt"]);
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn steering_at_a_question_drops_the_queue_and_sends_new_directions() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![
            answer(vec![shell("c1", "touch a.txt"), shell("c2", "touch b.txt")]),
            answer(vec![text("Only src then.")]),
        ],
    );
    t.instruction("touch everything");
    t.settle().await;
    t.keys("#only src\r");
    t.settle().await;
    assert!(t.typed.is_empty());
    let requests = t.requests();
    let last = requests.last().and_then(|r| r.messages.last()).expect("a steered call");
    assert_eq!(last.role, Role::User);
    assert!(last.content.iter().any(|b| matches!(b, Block::Text { text } if text == "only src")), "{last:?}");
    let results: Vec<String> = t.results().into_iter().map(|r| r.0).collect();
    assert_eq!(
        results,
        ["not run: the user gave new directions instead", "not run: the user gave new directions instead"]
    );
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn cancel_while_streaming_keeps_the_text_so_far_and_ends_the_turn() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![Answer { events: vec![text("Looking at the ")], ends: false }, answer(vec![text("Picking up.")])],
    );
    t.instruction("look around");
    t.step().await;
    assert!(t.driver.waiting(), "the answer is still streaming");
    t.keys("\x03");
    assert_eq!((&t.end().end, t.end().status), (&End::Stopped, 130));
    assert!(!t.driver.waiting(), "the stream was dropped");
    // The next turn's call carries the partial answer.
    t.instruction("go on");
    t.settle().await;
    let requests = t.requests();
    let texts: Vec<String> = requests[1].messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["look around", "Looking at the ", "go on"]);
}

#[tokio::test]
async fn cancel_while_a_command_runs_interrupts_it_and_the_model_is_told() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![shell("c1", "ls -R /")]), answer(vec![text("Stopped, as asked.")])],
    );
    t.outcomes.push_back(Ran::Hangs);
    t.instruction("list everything");
    t.settle().await;
    assert_eq!(t.typed, ["ls -R /"]);
    assert!(t.ended.is_empty(), "the command still runs");
    t.input(Input::Stop);
    assert!(t.ops.contains(&ShellOp::Interrupt), "{:?}", t.ops);
    assert_eq!(t.statuses(), [CommandStatus::Interrupted]);
    assert_eq!((&t.end().end, t.end().status), (&End::Stopped, 130));
    t.instruction("and now?");
    t.settle().await;
    let requests = t.requests();
    assert_eq!(
        tool_results(&requests[1].messages[2]),
        [("interrupted: the user ended the turn while it ran".to_string(), true)]
    );
}

#[tokio::test]
async fn a_command_that_times_out_is_reported_as_a_timeout() {
    let mut t =
        Harness::new(ConfirmMode::Auto, vec![answer(vec![shell("c1", "ls -R /")]), answer(vec![text("Too slow.")])]);
    t.outcomes.push_back(Ran::TimedOut("a\nb"));
    t.instruction("list everything");
    t.settle().await;
    assert_eq!(t.statuses(), [CommandStatus::Timeout]);
    let results = t.results();
    assert!(results[0].1, "an interrupted command is an error");
    assert!(results[0].0.contains("[interrupted by unixagent: still running after 300 s]"), "{results:?}");
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn a_failed_command_stops_the_queue() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![shell("c1", "ls missing"), shell("c2", "ls")]), answer(vec![text("It is missing.")])],
    );
    t.outcomes.push_back(Ran::Exit(2, "ls: cannot access 'missing': No such file or directory"));
    t.instruction("look");
    t.settle().await;
    assert_eq!(t.typed, ["ls missing"]);
    assert_eq!(t.statuses(), [CommandStatus::Failed, CommandStatus::Skipped]);
    let results = t.results();
    assert!(results[0].1 && results[0].0.contains("exit status: 2"), "{results:?}");
    assert_eq!(results[1].0, "not run: an earlier command failed with exit status 2");
    // The turn answered; its status is the last command's.
    assert_eq!((&t.end().end, t.end().status), (&End::Answered, 2));
}

const PLAN: [&str; 3] = ["echo step-1 | tee -a steps.txt", "taskset -p $$", "echo step-3 | tee -a steps.txt"];

fn plan() -> Vec<Answer> {
    vec![
        answer(vec![text("Three steps."), shell("c1", PLAN[0]), shell("c2", PLAN[1]), shell("c3", PLAN[2])]),
        answer(vec![text("All three ran.")]),
    ]
}

#[tokio::test]
async fn one_y_approves_the_plan_but_a_privileged_command_needs_yes_typed_out() {
    let mut t = Harness::new(ConfirmMode::Plan, plan());
    for _ in 0..3 {
        t.outcomes.push_back(Ran::Exit(0, ""));
    }
    t.instruction("three things");
    t.settle().await;
    assert!(t.notices().iter().any(|n| n.starts_with("plan:") && n.contains("3. echo step-3")), "{:?}", t.notices());
    t.keys("y");
    t.settle().await;
    // The privileged one is asked about on its own, and a `y` alone is
    // only the start of the word.
    assert_eq!(t.questions().last(), Some(&(PLAN[1].to_string(), "privileged".to_string())));
    t.keys("y");
    assert_eq!(t.typed, [PLAN[0]]);
    t.keys("es\r");
    t.settle().await;
    // The plan's approval covers the ordinary command after it.
    assert_eq!(t.typed, PLAN);
    assert_eq!(t.questions().len(), 2);
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn a_y_and_enter_at_a_privileged_question_skips_it_and_the_plan_goes_on() {
    let mut t = Harness::new(ConfirmMode::Plan, plan());
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.instruction("three things");
    t.settle().await;
    t.keys("y");
    t.settle().await;
    t.keys("y\r");
    t.settle().await;
    assert_eq!(t.typed, [PLAN[0], PLAN[2]]);
    assert_eq!(t.statuses(), [CommandStatus::Ok, CommandStatus::Skipped, CommandStatus::Ok]);
}

#[tokio::test]
async fn earlier_turns_are_summarised_when_the_window_is_full() {
    let long = "All of this was looked at closely. ".repeat(120);
    let long: &'static str = long.leak();
    let mut t = Harness::with_window(
        ConfirmMode::Auto,
        vec![
            answer(vec![text(long)]),
            answer(vec![text(long)]),
            answer(vec![text("The user asked twice; nothing ran.")]),
            answer(vec![text("Third answer.")]),
        ],
        4_000,
    );
    for instruction in ["first", "second", "third"] {
        t.instruction(instruction);
        t.settle().await;
    }
    let requests = t.requests();
    assert_eq!(requests.len(), 4, "two calls, a summary, the third call");
    assert_eq!(requests[2].system, summary::SUMMARY_SYSTEM);
    assert!(requests[2].messages[0].text().contains("[user] first"), "{:?}", requests[2].messages);
    let first = &requests[3].messages[0];
    assert!(first.text().contains("The user asked twice; nothing ran."), "{first:?}");
    assert_eq!(requests[3].messages.last().map(|m| m.text()).as_deref(), Some("third"));
    assert!(t.notices().iter().any(|n| n.contains("summarising the earlier turns")));
    assert_eq!(t.end().end, End::Answered);
}

#[tokio::test]
async fn a_command_the_sandbox_refused_is_named_to_the_model_and_the_person() {
    let mut t = Harness::new(
        ConfirmMode::Auto,
        vec![answer(vec![shell("c1", "cat notes/plan.txt")]), answer(vec![text("Hidden.")])],
    );
    let hidden = t.work.join("notes");
    let rules = ua_sandbox::Rules {
        read_deny: vec![ua_sandbox::rules::PathRule::new(&hidden, "a test rule")],
        ..Default::default()
    };
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    t.driver.set_sandbox(SandboxWatch::new(rules, rx));
    t.outcomes.push_back(Ran::Exit(1, "cat: notes/plan.txt: Permission denied"));
    t.instruction("read the plan");
    t.settle().await;
    let result = &t.results()[0].0;
    assert!(result.contains("[sandbox: ") && result.contains("a test rule"), "{result}");
    assert!(t.notices().iter().any(|n| n.starts_with("sandbox: ") && n.contains("a test rule")), "{:?}", t.notices());
}

#[tokio::test]
async fn without_the_sandbox_it_asked_for_a_session_answers_every_instruction_with_why() {
    let mut t = Harness::new(ConfirmMode::Auto, Vec::new());
    t.driver.set_blocked("the sandbox cannot be applied (no Landlock)".into());
    t.instruction("do anything");
    assert!(t.requests().is_empty(), "no model call");
    let error = t.events.iter().find_map(|e| match e {
        AgentEvent::Error { message, kind } => Some((message.clone(), kind.clone())),
        _ => None,
    });
    assert_eq!(
        error,
        Some(("agent commands do not run here: the sandbox cannot be applied (no Landlock)".into(), "sandbox".into()))
    );
    assert_eq!(t.ops, [ShellOp::FreshPrompt]);
    assert!(!t.driver.turn_running());
}

#[tokio::test]
async fn without_shell_integration_commands_are_refused() {
    let mut t = Harness::new(ConfirmMode::Auto, vec![answer(vec![shell("c1", "ls")]), answer(vec![text("I cannot.")])]);
    let context = |_lines| TurnContext { markers: false, ..TurnContext::default() };
    t.driver.instruction("look", context, &mut t.out);
    t.carry_out();
    t.settle().await;
    assert!(t.typed.is_empty());
    assert_eq!(t.statuses(), [CommandStatus::Denied]);
    assert!(t.results()[0].0.contains("shell integration is not working"), "{:?}", t.results());
}

#[tokio::test]
async fn esc_pauses_and_a_lone_hash_asks_again() {
    let mut t =
        Harness::new(ConfirmMode::Auto, vec![answer(vec![shell("c1", "touch a.txt")]), answer(vec![text("Made.")])]);
    t.outcomes.push_back(Ran::Exit(0, ""));
    t.instruction("make a file");
    t.settle().await;
    t.keys("\x1b");
    assert_eq!(t.ops, [ShellOp::TurnStarted, ShellOp::Pause]);
    assert!(!t.driver.takes_keys(), "the shell has the keys");
    t.instruction("");
    assert_eq!(t.ops.last(), Some(&ShellOp::Resume));
    assert_eq!(t.questions().len(), 2, "asked again");
    t.keys("y");
    t.settle().await;
    assert_eq!(t.typed, ["touch a.txt"]);
}
