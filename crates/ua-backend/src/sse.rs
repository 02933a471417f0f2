//! SSE framing glue and the decoder interface.
//!
//! Framing (lines, fields, `data:` joining, comments, CRLF) is done by the
//! `eventsource-stream` crate. What it hands us, `(event name, data)`, goes
//! into a provider [`Decoder`]: a plain state machine that does no I/O and
//! returns canonical events, so it can be driven from a test or a fuzzer
//! exactly as from the network (see [`replay`]).

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use ua_protocol::event::StreamEvent;

use crate::config::Kind;

/// Why a stream could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes or JSON do not follow the provider's protocol.
    #[error("{0}")]
    Malformed(String),
    /// The stream ended before the provider's end marker.
    #[error("the stream ended before the response was complete")]
    Truncated,
}

/// A provider's stream decoder: fed SSE events in order, it returns the
/// canonical events each one completes.
pub trait Decoder: Send {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, DecodeError>;
    /// Called once when the byte stream ends; events still owed, or
    /// `Truncated` if the provider's end marker never came.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, DecodeError>;
    /// Whether the end marker has been seen (later events are ignored).
    fn is_done(&self) -> bool;
}

/// A fresh decoder for a provider kind.
pub fn decoder_for(kind: Kind) -> Box<dyn Decoder> {
    match kind {
        Kind::Anthropic => Box::new(crate::anthropic::decode::AnthropicDecoder::default()),
        Kind::Openai => Box::new(crate::openai::decode::OpenAiDecoder::default()),
    }
}

/// Byte-level clean-up before framing: drops a leading UTF-8 byte order
/// mark and turns CRLF and lone CR line ends into LF, remembering a CR at
/// the end of one chunk until the next shows whether an LF follows.
///
/// eventsource-stream 0.2.3 handles neither edge itself: it strips a BOM
/// by slicing one byte into the three-byte character (a panic), and a
/// stream that ends in a lone CR leaves its last event undispatched.
/// Because that slicing also hits a second BOM right after the first (or
/// any text starting with byte `0xEF`), output that would start with
/// `0xEF` gets an empty comment line, `:\n`, in front: the SSE rules
/// ignore it, and the framing never sees a BOM first.
#[derive(Debug, Default)]
pub struct Prefilter {
    bom_done: bool,
    held: Vec<u8>,
    pending_cr: bool,
    emitted: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Prefilter {
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.bom_done {
            return self.line_ends(chunk);
        }
        self.held.extend_from_slice(chunk);
        let n = self.held.len().min(BOM.len());
        if self.held[..n] != BOM[..n] {
            self.bom_done = true;
            let held = std::mem::take(&mut self.held);
            return self.line_ends(&held);
        }
        if self.held.len() < BOM.len() {
            return Vec::new();
        }
        self.bom_done = true;
        let held = std::mem::take(&mut self.held);
        self.line_ends(&held[BOM.len()..])
    }

    /// Whatever was held back, at the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        self.bom_done = true;
        let held = std::mem::take(&mut self.held);
        let mut out = self.line_ends(&held);
        if std::mem::take(&mut self.pending_cr) {
            out.push(b'\n');
        }
        out
    }

    fn line_ends(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len() + 1);
        for &b in input {
            if std::mem::take(&mut self.pending_cr) {
                out.push(b'\n');
                if b == b'\n' {
                    continue;
                }
            }
            if b == b'\r' {
                self.pending_cr = true;
            } else {
                out.push(b);
            }
        }
        if !self.emitted && !out.is_empty() {
            self.emitted = true;
            if out[0] == BOM[0] {
                out.splice(0..0, *b":\n");
            }
        }
        out
    }
}

/// A byte stream passed through a [`Prefilter`].
pub(crate) struct Normalized<S> {
    inner: S,
    filter: Prefilter,
    ended: bool,
}

impl<S> Normalized<S> {
    pub(crate) fn new(inner: S) -> Self {
        Self { inner, filter: Prefilter::default(), ended: false }
    }
}

impl<S, E> Stream for Normalized<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            match this.inner.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    let out = this.filter.push(&chunk);
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Bytes::from(out))));
                    }
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    let out = this.filter.finish();
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Bytes::from(out))));
                    }
                }
                other => return other,
            }
        }
    }
}

/// The outcome of decoding a whole recorded stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub events: Vec<StreamEvent>,
    /// The first decoding failure, framing or protocol; events stop there.
    pub error: Option<DecodeError>,
}

/// Decodes a recorded stream delivered in the given chunks, through the
/// same framing and decoder the network path uses. Synchronous: the chunks
/// are all there, so the framing stream never has to wait.
pub fn replay(kind: Kind, chunks: &[&[u8]]) -> Replay {
    let owned: Vec<Result<Bytes, std::convert::Infallible>> =
        chunks.iter().map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    let mut frames = Normalized::new(futures_util::stream::iter(owned)).eventsource();
    let mut decoder = decoder_for(kind);
    let mut events = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        match frames.poll_next_unpin(&mut cx) {
            Poll::Ready(Some(Ok(ev))) => match decoder.feed(&ev.event, &ev.data) {
                Ok(mut out) => events.append(&mut out),
                Err(e) => return Replay { events, error: Some(e) },
            },
            Poll::Ready(Some(Err(e))) => {
                let error = DecodeError::Malformed(format!("bad SSE framing: {e}"));
                return Replay { events, error: Some(error) };
            }
            // An iterator stream is always ready, so Pending means nothing
            // more will come either.
            Poll::Pending | Poll::Ready(None) => {
                return match decoder.finish() {
                    Ok(mut out) => {
                        events.append(&mut out);
                        Replay { events, error: None }
                    }
                    Err(e) => Replay { events, error: Some(e) },
                };
            }
        }
    }
}

/// The fuzz body shared by the cargo-fuzz targets and the stable corpus
/// test: any bytes must decode without a panic, and where the whole input
/// decodes cleanly, cutting it into two chunks at a point taken from the
/// input must not change a single event.
pub fn check_any_input(kind: Kind, data: &[u8]) {
    let whole = replay(kind, &[data]);
    let cut = match data.first() {
        Some(&b) if !data.is_empty() => (usize::from(b) * 7919) % data.len(),
        _ => 0,
    };
    let (a, b) = data.split_at(cut);
    let split = replay(kind, &[a, b]);
    if whole.error.is_none() {
        assert_eq!(whole, split, "cutting the input at byte {cut} changed the decoding");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> Vec<u8> {
        let mut f = Prefilter::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(f.push(c));
        }
        out.extend(f.finish());
        out
    }

    #[test]
    fn prefilter_strips_a_bom_split_anywhere() {
        assert_eq!(run(&[b"\xEF\xBB\xBFdata: x\n"]), b"data: x\n");
        assert_eq!(run(&[b"\xEF", b"\xBB", b"\xBF", b"d"]), b"d");
        assert_eq!(run(&[b"\xEF\xBB"]), b":\n\xEF\xBB", "a lone prefix is kept, behind a comment");
        assert_eq!(run(&[b"\xEFx"]), b":\n\xEFx");
        assert_eq!(run(&[b"a\xEF\xBB\xBF"]), b"a\xEF\xBB\xBF", "only at the start");
    }

    #[test]
    fn prefilter_never_lets_the_framing_see_a_bom_first() {
        let twice = b"\xEF\xBB\xBF\xEF\xBB\xBFx";
        assert_eq!(run(&[twice]), b":\n\xEF\xBB\xBFx");
        let chunks: Vec<&[u8]> = twice.chunks(1).collect();
        assert_eq!(run(&chunks), b":\n\xEF\xBB\xBFx", "split bytewise");
        assert_eq!(run(&[b"\xEF\xBB\xBF", b"\xEF\xBF\xBD"]), b":\n\xEF\xBF\xBD");
        assert_eq!(run(&[b"\xEF\xBB\xBF", b"\r", b"\xEF"]), b"\n\xEF", "only the first output byte counts");
    }

    #[test]
    fn prefilter_normalises_line_ends_across_chunks() {
        assert_eq!(run(&[b"a\r\nb\rc\n"]), b"a\nb\nc\n");
        assert_eq!(run(&[b"a\r", b"\nb\r", b"\r", b"c"]), b"a\nb\n\nc");
        assert_eq!(run(&[b"a\r"]), b"a\n", "a final CR is flushed");
    }
}
