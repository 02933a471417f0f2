//! The model call as a session makes it: the provider chain (built on a
//! thread at the first call), the stream of the call in flight, what the
//! server revealed of its limits, the session's token budget, and the
//! bookkeeping of the current call (its number, usage, stop reason,
//! whether anything of it is on screen). A summary call is one of its
//! calls too.
//!
//! [`ModelCall`] owns all of it and does no rendering or journaling: it
//! says what happened (a warning to show, a retry to make, a summary that
//! came back) and the turn driver acts on it.

use std::sync::Arc;

use tokio::sync::oneshot;
use ua_backend::error::{BackendError, ErrorKind};
use ua_backend::limits::{CallLimits, Recovery};
use ua_backend::provider::{EventStream, Fallback, Provider, Request};
use ua_backend::tokens::{BudgetStatus, SessionBudget, estimate_prompt};
use ua_context::fit::retry_budget;
use ua_protocol::event::{StopReason, StreamEvent, Usage};
use ua_protocol::tool::ToolDefinition;

use crate::agent::backend::{self, Built};

/// What woke the model call up.
#[derive(Debug)]
pub(in crate::session) enum ModelWake {
    /// The next event of the call's answer (`None`: it ended).
    Event(Option<Result<StreamEvent, BackendError>>),
    /// The backend, built (`None`: its thread went away).
    Built(Option<Result<Built, String>>),
}

/// A summary call on its way, and what it has gathered.
#[derive(Debug)]
pub(in crate::session) struct Summarising {
    text: String,
    usage: Option<Usage>,
    /// The messages it replaces: those before this index.
    upto: usize,
    call: u32,
    model: String,
}

/// A summary call that came back whole.
#[derive(Debug)]
pub(in crate::session) struct Summary {
    pub text: String,
    pub usage: Option<Usage>,
    pub upto: usize,
    pub call: u32,
    pub model: String,
}

/// What one event of a summary call's stream means.
#[derive(Debug)]
pub(in crate::session) enum SummaryStep {
    /// Nothing to do yet.
    More,
    /// Tokens it used: they count toward the turn it was made for.
    Usage(Usage),
    /// The call failed.
    Failed(BackendError),
    /// It ended, with its text (possibly empty).
    Done(Summary),
}

/// The provider, the call in flight and its limits.
pub(in crate::session) struct ModelCall {
    setup: backend::Setup,
    provider: Option<Arc<Fallback>>,
    /// The provider being built, on a thread.
    building: Option<backend::Building>,
    /// A model call waits for the backend to be built.
    pending: bool,
    /// Building ahead failed before any call waited: the first call's
    /// turn hears why.
    failed: Option<String>,
    stream: Option<EventStream>,
    /// The backend's limits as its errors revealed them, and the retry of
    /// a call that did not fit.
    limits: CallLimits,
    /// Tokens used this session against `max_tokens_per_session`.
    budget: SessionBudget,
    call_no: u32,
    /// Something of this call's answer is on screen.
    shown: bool,
    usage: Option<Usage>,
    stop: Option<StopReason>,
    /// Earlier turns being summarised, before the call that did not fit.
    summary: Option<Summarising>,
    /// A summary was tried this turn (it is not tried twice).
    summary_tried: bool,
    /// The kind of the backend error that is ending the turn, for its
    /// `error` event.
    error_kind: Option<String>,
}

impl std::fmt::Debug for ModelCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelCall")
            .field("provider", &self.provider.as_ref().map(|p| p.name().to_string()))
            .field("streaming", &self.stream.is_some())
            .field("call_no", &self.call_no)
            .finish_non_exhaustive()
    }
}

impl ModelCall {
    /// `building`: the backend already being built (work that surely
    /// calls the model starts that with the process).
    pub(in crate::session) fn new(setup: backend::Setup, building: Option<backend::Building>) -> Self {
        let budget = SessionBudget::new(setup.session_limit());
        Self {
            setup,
            provider: None,
            building,
            pending: false,
            failed: None,
            stream: None,
            limits: CallLimits::default(),
            budget,
            call_no: 0,
            shown: false,
            usage: None,
            stop: None,
            summary: None,
            summary_tried: false,
            error_kind: None,
        }
    }

    /// A provider already built (tests drive turns with a fake one).
    #[cfg(test)]
    pub(in crate::session) fn with_provider(mut self, provider: Arc<Fallback>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// A new turn: its calls count from one, and it may summarise once.
    pub(in crate::session) fn new_turn(&mut self) {
        self.call_no = 0;
        self.summary_tried = false;
    }

    /// Someone is typing an instruction: the backend is built and the
    /// scrubber's patterns compiled meanwhile, on threads, so the first
    /// call waits for neither. Once: nothing is started again once it is
    /// built, being built, or failed.
    pub(in crate::session) fn prepare(&mut self) {
        if self.provider.is_some() || self.building.is_some() || self.failed.is_some() {
            return;
        }
        self.building = Some(backend::prepare(self.setup.clone()));
    }

    /// Starts a call: the provider to make it with, or `None` while the
    /// backend is still being built (the call is made once it is).
    pub(in crate::session) fn begin(&mut self) -> Option<Arc<Fallback>> {
        // First, so a call that ends before its request still closes the
        // retry that led to it.
        self.limits.start_call();
        self.shown = false;
        self.usage = None;
        self.stop = None;
        if let Some(p) = &self.provider {
            return Some(p.clone());
        }
        self.pending = true;
        if let Some(message) = self.failed.take() {
            // Heard as if built now: the call's turn ends with it.
            let (tx, rx) = oneshot::channel();
            let _ = tx.send(Err(message));
            self.building = Some(rx);
        } else if self.building.is_none() {
            self.building = Some(backend::spawn_build(self.setup.clone()));
        }
        None
    }

    /// Why no call may be made: the session's token budget is spent.
    pub(in crate::session) fn exhausted(&self) -> Option<String> {
        let BudgetStatus::Exhausted { used, limit } = self.budget.status() else { return None };
        Some(format!(
            "this session has used {used} tokens, its max_tokens_per_session of {limit}; start a new session or raise the limit"
        ))
    }

    /// The window less room for the answer and the tool definitions, as
    /// far as the server has told us its limits.
    pub(in crate::session) fn prompt_budget(&self, provider: &Fallback, tools: &[ToolDefinition]) -> u64 {
        let (window, max_tokens) = (provider.context_window(), provider.max_tokens());
        let budget = self.limits.prompt_budget(window, max_tokens, estimate_prompt("", &[], tools));
        if self.limits.trimming() { retry_budget(budget) } else { budget }
    }

    /// Whether to summarise the earlier turns now: once a turn.
    pub(in crate::session) fn try_summary(&mut self) -> bool {
        !std::mem::replace(&mut self.summary_tried, true)
    }

    /// Numbers the next call of the turn.
    pub(in crate::session) fn next_call(&mut self) -> u32 {
        self.call_no += 1;
        self.call_no
    }

    /// Sends the request.
    pub(in crate::session) fn stream(&mut self, provider: &Fallback, mut request: Request) {
        request.max_tokens = self.limits.request_max_tokens(provider.max_tokens());
        self.stream = Some(provider.stream(&request));
    }

    /// Sends a summary call replacing the messages before `upto`.
    pub(in crate::session) fn summarise(&mut self, provider: &Fallback, request: Request, upto: usize) {
        let call = self.call_no;
        self.summary =
            Some(Summarising { text: String::new(), usage: None, upto, call, model: provider.model().to_string() });
        self.stream = Some(provider.stream(&request));
    }

    /// A call is streaming.
    pub(in crate::session) fn streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// Something is on its way: the call's next event or the backend.
    pub(in crate::session) fn waiting(&self) -> bool {
        self.stream.is_some() || self.building.is_some()
    }

    /// The next event of the call in flight, or the backend once built.
    pub(in crate::session) async fn wake(&mut self) -> ModelWake {
        tokio::select! {
            biased;
            event = next(&mut self.stream), if self.stream.is_some() => ModelWake::Event(event),
            built = built(&mut self.building), if self.building.is_some() => ModelWake::Built(built),
            else => std::future::pending().await,
        }
    }

    /// Takes in the built backend: its warnings, and whether a call waited
    /// for it. A failure is the turn's; one that no call waited for yet (a
    /// backend built ahead) is kept for the first call.
    pub(in crate::session) fn on_built(&mut self, built: Result<Built, String>) -> Result<(Vec<String>, bool), String> {
        match built {
            Ok((provider, warnings)) => {
                self.provider = Some(provider);
                Ok((warnings, std::mem::take(&mut self.pending)))
            }
            Err(message) if !self.pending => {
                self.failed = Some(message);
                Ok((Vec::new(), false))
            }
            Err(message) => {
                self.pending = false;
                Err(message)
            }
        }
    }

    /// Takes note of an event of the call's answer; returns a warning for
    /// the person when the session's budget is nearly spent.
    pub(in crate::session) fn on_event(&mut self, ev: &StreamEvent) -> Option<String> {
        match ev {
            StreamEvent::Usage(u) => {
                self.usage = Some(*u);
                if let BudgetStatus::Warn { used, limit } = self.budget.record(u) {
                    return Some(format!(
                        "this session has used {used} of its {limit} tokens (max_tokens_per_session)"
                    ));
                }
            }
            StreamEvent::Stop(s) => self.stop = Some(s.clone()),
            StreamEvent::TextDelta(_) | StreamEvent::ThinkingDelta(_) => self.shown = true,
            _ => {}
        }
        None
    }

    /// The call failed. Something did not fit (the conversation, or the
    /// answer beside it) and nothing is on screen yet: the retry to make
    /// within the limits the server stated, if there is one.
    pub(in crate::session) fn on_error(&mut self, e: &BackendError) -> Option<Recovery> {
        self.stream = None;
        match self.provider.as_ref() {
            Some(p) if !self.shown => self.limits.recover(e, p.context_window(), p.max_tokens()),
            _ => None,
        }
    }

    /// The error ends the turn: its kind, for the turn's `error` event.
    pub(in crate::session) fn set_error(&mut self, kind: ErrorKind) {
        self.error_kind = Some(error_kind(kind));
    }

    pub(in crate::session) fn take_error_kind(&mut self) -> Option<String> {
        self.error_kind.take()
    }

    /// The stream ended (or the turn did).
    pub(in crate::session) fn end_stream(&mut self) {
        self.stream = None;
    }

    /// The turn was cancelled: no call goes on, none waits.
    pub(in crate::session) fn cancel(&mut self) {
        self.stream = None;
        self.pending = false;
    }

    pub(in crate::session) fn call_no(&self) -> u32 {
        self.call_no
    }

    /// The current call's usage and stop reason, for the journal.
    pub(in crate::session) fn answer_meta(&self) -> (Option<Usage>, Option<StopReason>) {
        (self.usage, self.stop.clone())
    }

    /// The model that answers, once the backend is built.
    pub(in crate::session) fn model(&self) -> Option<&str> {
        self.provider.as_deref().map(Provider::model)
    }

    /// The provider, for the judge.
    pub(in crate::session) fn provider(&self) -> Option<Arc<dyn Provider>> {
        self.provider.clone().map(|p| p as Arc<dyn Provider>)
    }

    /// Tokens a continued session used before count against its budget.
    pub(in crate::session) fn used_before(&mut self, before: &Usage) -> Option<String> {
        let BudgetStatus::Warn { used, limit } = self.budget.record(before) else { return None };
        Some(format!("this session has used {used} of its {limit} tokens (max_tokens_per_session)"))
    }

    /// A summary call is streaming.
    pub(in crate::session) fn summarising(&self) -> bool {
        self.summary.is_some()
    }

    /// An event of the summary call's stream: gathered until it ends.
    pub(in crate::session) fn summary_event(
        &mut self,
        event: Option<Result<StreamEvent, BackendError>>,
    ) -> SummaryStep {
        let Some(s) = self.summary.as_mut() else { return SummaryStep::More };
        match event {
            Some(Ok(StreamEvent::TextDelta(t))) => {
                s.text.push_str(&t);
                SummaryStep::More
            }
            Some(Ok(StreamEvent::Usage(u))) => {
                s.usage = Some(u);
                let _ = self.budget.record(&u);
                SummaryStep::Usage(u)
            }
            Some(Ok(_)) => SummaryStep::More,
            Some(Err(e)) => {
                self.stream = None;
                self.summary = None;
                SummaryStep::Failed(e)
            }
            None => {
                self.stream = None;
                let Some(s) = self.summary.take() else { return SummaryStep::More };
                SummaryStep::Done(Summary {
                    text: s.text.trim().to_string(),
                    usage: s.usage,
                    upto: s.upto,
                    call: s.call,
                    model: s.model,
                })
            }
        }
    }
}

/// The next event of a stream that is there.
async fn next(stream: &mut Option<EventStream>) -> Option<Result<StreamEvent, BackendError>> {
    use futures_util::StreamExt;
    match stream {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// The backend, once built (the branch is disabled while none is).
async fn built(rx: &mut Option<backend::Building>) -> Option<Result<Built, String>> {
    match rx {
        Some(r) => {
            let v = r.await.ok();
            *rx = None;
            v
        }
        None => std::future::pending().await,
    }
}

/// A backend error's kind as the `kind` of an `error` event
/// (`context_too_long`, `rate_limited`, …).
fn error_kind(kind: ErrorKind) -> String {
    let name = format!("{kind:?}");
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that failed to build before any call waited for it: the
    /// first call hears why, as if it had waited.
    #[tokio::test]
    async fn a_backend_that_failed_ahead_fails_the_first_call() {
        let (tx, rx) = oneshot::channel();
        tx.send(Err("unknown backend 'nowhere'".to_string())).unwrap();
        let mut model = ModelCall::new(backend::Setup::default(), Some(rx));
        assert!(model.waiting());
        let ModelWake::Built(Some(built)) = model.wake().await else { panic!("the build was not heard") };
        // Nothing waited: nothing to report yet, and nothing is built.
        assert_eq!(model.on_built(built).unwrap(), (Vec::new(), false));
        assert!(!model.waiting() && model.model().is_none());
        // The first call waits, and hears the failure.
        assert!(model.begin().is_none());
        let ModelWake::Built(Some(built)) = model.wake().await else { panic!("the failure was not kept") };
        assert_eq!(model.on_built(built).unwrap_err(), "unknown backend 'nowhere'");
    }
}
