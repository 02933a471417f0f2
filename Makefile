# unixagent — common tasks. `make run` starts unixagent on your shell;
# `make check` is what CI runs.

CARGO ?= cargo

.PHONY: run build check deps fmt clippy test doc bench fuzz clean

run:
	$(CARGO) run --release -p unixagent

build:
	$(CARGO) build --release -p unixagent

# Formatting, lints with warnings denied, the whole test suite, and docs.
check: deps fmt clippy test doc

deps:
	./scripts/test-deps.sh

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test:
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --workspace --no-fail-fast; \
	else \
		$(CARGO) test --workspace --no-fail-fast; \
	fi
	$(CARGO) test --workspace --doc

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

# Throughput, echo latency, startup and idle cost of the PTY proxy, next to
# `script -q` and a bare PTY; then the agent loop's latencies (a text chunk
# to the screen, a tool call to the shell); the safety pipeline's cost per
# decision; the secret scrubber's throughput; the task board (claims at
# once, reading a big board, the watcher). UA_BENCH_QUICK=1 runs a short
# version.
bench:
	$(CARGO) build --release -p unixagent
	$(CARGO) bench -p unixagent --bench proxy
	$(CARGO) bench -p unixagent --bench agent
	$(CARGO) bench -p unixagent --bench sandbox
	$(CARGO) bench -p unixagent --bench sessions
	$(CARGO) bench -p unixagent --bench children
	$(CARGO) bench -p unixagent --bench board
	$(CARGO) bench -p ua-sandbox --bench proxy
	$(CARGO) bench -p ua-policy --bench pipeline
	$(CARGO) bench -p ua-context --bench scrub

# Each fuzz target (or those in FUZZ_TARGETS) for FUZZ_SECONDS (default 30)
# on stable Rust; installs cargo-fuzz if missing and fails if a target
# crashes or hangs. See fuzz/README.md.
fuzz:
	CARGO="$(CARGO)" ./fuzz/run.sh $(FUZZ_TARGETS)

clean:
	$(CARGO) clean
