//! The `Provider` trait, the HTTP provider behind both adapters, and the
//! fallback chain.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use ua_protocol::conversation::Message;
use ua_protocol::event::{StopReason, StreamEvent, TurnBuilder, Usage};
use ua_protocol::tool::ToolDefinition;

use crate::config::{BackendSpec, Kind};
use crate::error::BackendError;
use crate::key::ApiKey;
use crate::transport::{Call, Transport, run};
use crate::{anthropic, openai};
use crate::{limits, tokens};

/// What a model call yields. Dropping it cancels the HTTP request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, BackendError>> + Send>>;

/// A boxed future, so the trait stays object-safe.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// One model call: system prompt, conversation, tools.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    /// Overrides the backend's `max_tokens` for this call (the judge wants
    /// short answers).
    pub max_tokens: Option<u32>,
}

/// The whole answer of a non-streaming call.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub message: Message,
    pub usage: Option<Usage>,
    pub stop: Option<StopReason>,
}

/// What the two adapters share, and all the agent needs of a model.
pub trait Provider: Send + Sync + fmt::Debug {
    /// The configured backend name (`anthropic`, `local`, …).
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// Starts a streaming call. Lazy: the request is sent when the stream
    /// is first polled.
    fn stream(&self, request: &Request) -> EventStream;
    /// The model's context window in tokens.
    fn context_window(&self) -> u64;
    /// The output limit a request without its own `max_tokens` gets.
    fn max_tokens(&self) -> u32;

    /// A fast, slightly pessimistic estimate of the request's prompt
    /// tokens, for trimming before the call.
    fn estimate_tokens(&self, request: &Request) -> u64 {
        tokens::estimate_prompt(&request.system, &request.messages, &request.tools)
    }

    /// A call whose whole answer arrives at once (the judge uses it). It is
    /// the stream collected, so both share one code path, one set of
    /// retries and one set of tests.
    fn complete(&self, request: &Request) -> BoxFuture<Result<Completion, BackendError>> {
        let mut stream = self.stream(request);
        Box::pin(async move {
            let mut turn = TurnBuilder::default();
            while let Some(ev) = stream.next().await {
                turn.push(&ev?);
            }
            Ok(Completion { usage: turn.usage(), stop: turn.stop_reason().cloned(), message: turn.finish() })
        })
    }
}

/// Everything one backend needs at call time, key included.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub name: String,
    pub kind: Kind,
    pub model: String,
    pub base_url: String,
    pub key: Option<ApiKey>,
    /// What to tell the user to check when the key is rejected.
    pub key_hint: String,
    pub max_tokens: u32,
    pub context_window: u64,
    pub thinking_budget: Option<u32>,
}

impl ProviderSettings {
    /// Fixes a spec's settings, reading its key (running `api_key_cmd`
    /// here, once).
    pub fn from_spec(spec: &BackendSpec, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, BackendError> {
        let context_window = tokens::context_window(&spec.model, spec.context_window);
        Ok(Self {
            key: spec.key.resolve(&spec.name, env)?,
            key_hint: spec.key.hint(),
            name: spec.name.clone(),
            kind: spec.kind,
            model: spec.model.clone(),
            base_url: spec.base_url.clone(),
            // The window is known only now (`--model` may have changed the
            // model after the spec was made), and the output limit must
            // leave the prompt room in it.
            max_tokens: limits::output_limit(spec.max_tokens, context_window),
            context_window,
            thinking_budget: spec.thinking_budget,
        })
    }

    #[cfg(test)]
    pub(crate) fn for_test(name: &str, model: &str, base_url: &str) -> Self {
        Self {
            name: name.into(),
            kind: if name == "anthropic" { Kind::Anthropic } else { Kind::Openai },
            model: model.into(),
            base_url: base_url.into(),
            key: None,
            key_hint: "K".into(),
            max_tokens: 1024,
            context_window: 1000,
            thinking_budget: None,
        }
    }
}

/// A provider over HTTP: Anthropic or OpenAI-compatible by `kind`.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    settings: Arc<ProviderSettings>,
    transport: Transport,
}

impl HttpProvider {
    pub fn new(settings: ProviderSettings, transport: Transport) -> Self {
        Self { settings: Arc::new(settings), transport }
    }

    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }
}

impl Provider for HttpProvider {
    fn name(&self) -> &str {
        &self.settings.name
    }

    fn model(&self) -> &str {
        &self.settings.model
    }

    fn context_window(&self) -> u64 {
        self.settings.context_window
    }

    fn max_tokens(&self) -> u32 {
        self.settings.max_tokens
    }

    fn stream(&self, request: &Request) -> EventStream {
        let s = &self.settings;
        let (url, headers, body) = match s.kind {
            Kind::Anthropic => (anthropic::url(&s.base_url), anthropic::headers(s), anthropic::body(s, request)),
            Kind::Openai => (openai::url(&s.base_url), openai::headers(s), openai::body(s, request)),
        };
        let call = Call {
            backend: s.name.clone(),
            model: s.model.clone(),
            kind: s.kind,
            url,
            headers,
            body: body.to_string().into(),
            key_hint: s.key_hint.clone(),
        };
        run(self.transport.clone(), call)
    }
}

/// Told to the caller when one backend is given up for the next.
pub type FallbackNotice = Arc<dyn Fn(&str, &BackendError, &str) + Send + Sync>;

/// Backends in order: a call goes to the first, and moves to the next when
/// one fails before showing anything with an error another backend may not
/// share (unreachable, overloaded, rate limited, 5xx), design §14.8.
#[derive(Clone)]
pub struct Fallback {
    chain: Arc<[Arc<dyn Provider>]>,
    notice: Option<FallbackNotice>,
}

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback").field("chain", &self.chain).finish()
    }
}

impl Fallback {
    /// `chain` must not be empty.
    pub fn new(chain: Vec<Arc<dyn Provider>>) -> Result<Self, BackendError> {
        if chain.is_empty() {
            return Err(BackendError::Config(crate::config::NO_BACKEND.to_owned()));
        }
        Ok(Self { chain: chain.into(), notice: None })
    }

    /// Calls `notice(failed backend, its error, next backend)` on each
    /// switch, so the user sees one line about it.
    pub fn with_notice(mut self, notice: FallbackNotice) -> Self {
        self.notice = Some(notice);
        self
    }

    pub fn chain(&self) -> &[Arc<dyn Provider>] {
        &self.chain
    }

    fn first(&self) -> &dyn Provider {
        // `new` refuses an empty chain.
        &*self.chain[0]
    }
}

struct FallbackState {
    fallback: Fallback,
    request: Request,
    index: usize,
    current: EventStream,
    yielded: bool,
}

impl Provider for Fallback {
    fn name(&self) -> &str {
        self.first().name()
    }

    fn model(&self) -> &str {
        self.first().model()
    }

    fn context_window(&self) -> u64 {
        self.first().context_window()
    }

    fn max_tokens(&self) -> u32 {
        self.first().max_tokens()
    }

    fn stream(&self, request: &Request) -> EventStream {
        let state = FallbackState {
            fallback: self.clone(),
            request: request.clone(),
            index: 0,
            current: self.first().stream(request),
            yielded: false,
        };
        Box::pin(futures_util::stream::unfold(state, |mut st| async move {
            loop {
                match st.current.next().await {
                    Some(Err(e)) if !st.yielded && e.warrants_fallback() && st.index + 1 < st.fallback.chain.len() => {
                        let failed = st.fallback.chain[st.index].name().to_owned();
                        st.index += 1;
                        let next = Arc::clone(&st.fallback.chain[st.index]);
                        if let Some(notice) = &st.fallback.notice {
                            notice(&failed, &e, next.name());
                        }
                        st.current = next.stream(&st.request);
                    }
                    Some(item) => {
                        st.yielded |= item.is_ok();
                        return Some((item, st));
                    }
                    None => return None,
                }
            }
        }))
    }
}

/// Builds the fallback chain for resolved specs. The first spec must build
/// (its error is returned); a fallback that cannot (its key is missing) is
/// left out and its error returned alongside, for a warning.
pub fn build_chain(
    specs: &[BackendSpec],
    transport: &Transport,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Fallback, Vec<BackendError>), BackendError> {
    let mut chain: Vec<Arc<dyn Provider>> = Vec::new();
    let mut skipped = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match ProviderSettings::from_spec(spec, env) {
            Ok(s) => chain.push(Arc::new(HttpProvider::new(s, transport.clone()))),
            Err(e) if i == 0 => return Err(e),
            Err(e) => skipped.push(e),
        }
    }
    Ok((Fallback::new(chain)?, skipped))
}
