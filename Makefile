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

clean:
	$(CARGO) clean
