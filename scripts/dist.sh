#!/usr/bin/env bash
# `make dist`: a static x86_64 Linux build of unixagent (the musl target),
# and a tarball of it with its man page, completions, licences and README
# in dist/, beside a sha256 file:
#
#   dist/unixagent-VERSION-x86_64-linux-musl.tar.gz
#   dist/unixagent-VERSION-x86_64-linux-musl.tar.gz.sha256
#
# The man page and the completions are written by the static binary
# itself, into its own target directory too, where `make deb` takes them.
# If the musl target cannot be had, it says so and fails: nothing is
# built against glibc in its place.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-musl
CARGO=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-target}

die() {
    echo "dist: $*" >&2
    exit 1
}

[ "$(uname -m)" = x86_64 ] || die "the static build is for x86_64 and this machine is $(uname -m)"
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    command -v rustup >/dev/null 2>&1 ||
        die "the $TARGET target cannot be had: rustup is not installed, so its standard library cannot be added"
    echo "dist: adding the $TARGET target" >&2
    rustup target add "$TARGET" || die "the $TARGET target cannot be had: \`rustup target add $TARGET\` failed"
fi
# ring's C and assembly are built with the musl cross compiler.
command -v x86_64-linux-musl-gcc >/dev/null 2>&1 || command -v musl-gcc >/dev/null 2>&1 ||
    die "building for $TARGET needs musl's C compiler: install musl-tools (Debian, Ubuntu)"

# Without its line tables the binary is a fifth of the size; panics still
# name their functions.
CARGO_PROFILE_RELEASE_STRIP=debuginfo "$CARGO" build --release --locked --target "$TARGET" -p unixagent
out="$target_dir/$TARGET/release"
bin="$out/unixagent"
# A static PIE (Rust's default for musl, kept for ASLR): file(1) says
# "static-pie linked"; either way there must be no interpreter to load.
case "$(file -b "$bin")" in
*"static-pie linked"* | *"statically linked"*) ;;
*) die "$bin is not statically linked: $(file -b "$bin")" ;;
esac

# The assets beside the binary, for the tarball and for `make deb`.
"$bin" __man >"$out/unixagent.1"
gzip -9 -n -c "$out/unixagent.1" >"$out/unixagent.1.gz"
mkdir -p "$out/completions"
"$bin" completions bash >"$out/completions/unixagent.bash"
"$bin" completions zsh >"$out/completions/_unixagent"
"$bin" completions fish >"$out/completions/unixagent.fish"

version=$("$bin" --version | awk '{print $2}')
name="unixagent-$version-x86_64-linux-musl"
mkdir -p dist
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/completions"
cp "$bin" "$out/unixagent.1" "$stage/$name/"
cp "$out"/completions/* "$stage/$name/completions/"
cp LICENSE-MIT LICENSE-APACHE README.md "$stage/$name/"
# The same bytes for the same commit: fixed owner, order and times.
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    -C "$stage" -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "dist/$name.tar.gz"
