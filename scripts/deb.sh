#!/usr/bin/env bash
# `make deb` (after `make dist`): dist/unixagent_VERSION-1_amd64.deb from
# the static binary and the man page and completions dist.sh wrote beside
# it. cargo-deb is installed with cargo when missing (a pinned version).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-musl
CARGO=${CARGO:-cargo}
CARGO_DEB_VERSION=3.8.0

if ! "$CARGO" deb --version >/dev/null 2>&1; then
    echo "deb: installing cargo-deb $CARGO_DEB_VERSION" >&2
    "$CARGO" install --locked --quiet "cargo-deb@$CARGO_DEB_VERSION"
fi
mkdir -p dist
# --no-build: the binary is the one dist.sh built and checked; --no-strip:
# the release profile already keeps only line tables.
"$CARGO" deb -p unixagent --target "$TARGET" --no-build --no-strip --output dist/
ls -1 dist/*.deb
