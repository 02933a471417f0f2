# unixagent — common tasks. `make run` starts unixagent on your shell;
# `make check` is what CI runs.

CARGO ?= cargo
export CARGO
# Where cargo builds (it honours CARGO_TARGET_DIR).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)

# `make install`: where, and what. DESTDIR is prepended to every path
# (for packaging); BIN defaults to the release build, made first.
PREFIX ?= /usr/local
DESTDIR ?=
BIN ?= $(TARGET_DIR)/release/unixagent
SHELLS_FILE ?= /etc/shells

.PHONY: run build check deps fmt clippy test doc man dist deb check-dist install uninstall \
	install-login-shell uninstall-login-shell bench bench-static fuzz clean

run:
	$(CARGO) run --release -p unixagent

build:
	$(CARGO) build --release -p unixagent

# Formatting, lints with warnings denied, the whole test suite, docs, and
# the release artefacts: the static tarball and the Debian package, each
# checked by running what was built.
check: deps fmt clippy test doc dist deb check-dist

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

# docs/unixagent.1 from the command line's definition (a test fails when it
# is out of date).
man:
	$(CARGO) run -q -p unixagent -- __man > docs/unixagent.1

# A static x86_64 Linux binary (musl) and dist/unixagent-VERSION-x86_64-
# linux-musl.tar.gz with its sha256: the binary, the man page, the
# completions, the licences and the README.
dist:
	./scripts/dist.sh

# dist/unixagent_VERSION_amd64.deb from the static binary (cargo-deb,
# installed when missing).
deb: dist
	./scripts/deb.sh

# Runs what dist and deb built: static, with an empty environment, in a
# bare chroot, the gate and an agent command; the package installed, run
# and removed.
check-dist:
	./scripts/check-dist.sh

# The binary, the man page and the bash, zsh and fish completions under
# $(DESTDIR)$(PREFIX); uninstall removes exactly those.
install:
	BIN="$(BIN)" BUILD=$(if $(filter file,$(origin BIN)),1,0) PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" \
		./scripts/install.sh install

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" ./scripts/install.sh uninstall

# Lists $(PREFIX)/bin/unixagent in /etc/shells, so chsh accepts it (needs
# root). A separate step on purpose: read README's "Make it your login
# shell" first.
install-login-shell:
	PREFIX="$(PREFIX)" SHELLS_FILE="$(SHELLS_FILE)" ./scripts/install.sh login-shell

uninstall-login-shell:
	PREFIX="$(PREFIX)" SHELLS_FILE="$(SHELLS_FILE)" ./scripts/install.sh no-login-shell

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

# Start-up and proxy throughput of the static (musl) build next to the
# glibc build, in one run of the proxy benchmark.
bench-static: dist
	$(CARGO) build --release -p unixagent
	UA_BENCH_ALSO="static=$(TARGET_DIR)/x86_64-unknown-linux-musl/release/unixagent" \
		$(CARGO) bench -p unixagent --bench proxy

# Each fuzz target (or those in FUZZ_TARGETS) for FUZZ_SECONDS (default 30)
# on stable Rust; installs cargo-fuzz if missing and fails if a target
# crashes or hangs. See fuzz/README.md.
fuzz:
	CARGO="$(CARGO)" ./fuzz/run.sh $(FUZZ_TARGETS)

clean:
	$(CARGO) clean
	rm -rf dist
