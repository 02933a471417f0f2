#!/usr/bin/env bash
# `make check-dist` (after `make dist` and `make deb`): runs what they built.
#
# The tarball: its checksum and contents; the binary statically linked; run
# with an empty environment; run in a bare chroot holding only it and a
# static shell; the gate deciding (Cedar evaluated on musl, where the main
# thread's stack once made every decision fail); and one agent command,
# from an instruction to the fake model through the gate and the kernel
# sandbox to its output. The Debian package: the same files, installed
# with dpkg -i, run, and removed with dpkg -r leaving nothing behind.
#
# Needs root for the chroot and dpkg (through sudo when not root, as
# scripts/test-deps.sh does for apt); fails, never skips, without it.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
name="unixagent-$version-x86_64-linux-musl"
tarball="dist/$name.tar.gz"
deb="dist/unixagent_${version}-1_amd64.deb"

fail() {
    echo "check-dist: FAILED: $*" >&2
    exit 1
}
pass() { echo "check-dist: ok: $*"; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "the chroot and dpkg checks need root: run them as root, or install sudo"
    sudo="sudo"
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    if dpkg-query -W -f='${Status}' unixagent 2>/dev/null | grep -q installed; then
        $sudo dpkg -r unixagent >/dev/null 2>&1 || true
    fi
    $sudo rm -rf "$work"
}
trap cleanup EXIT

# --- the tarball ---------------------------------------------------------
[ -f "$tarball" ] || fail "$tarball is missing: run \`make dist\` first"
(cd dist && sha256sum --quiet -c "$name.tar.gz.sha256") || fail "the sha256 of $tarball does not match"
pass "sha256 of $tarball"
want="$name/
$name/LICENSE-APACHE
$name/LICENSE-MIT
$name/README.md
$name/completions/
$name/completions/_unixagent
$name/completions/unixagent.bash
$name/completions/unixagent.fish
$name/unixagent
$name/unixagent.1"
got=$(tar -tzf "$tarball" | sort)
[ "$got" = "$want" ] || fail "the tarball holds:
$got
instead of:
$want"
pass "tarball contents"
tar -xzf "$tarball" -C "$work"
bin="$work/$name/unixagent"

# Rust's musl default, a static PIE (ASLR applies to it), which file(1)
# calls "static-pie linked"; no interpreter, no library either way.
kind=$(file -b "$bin")
case "$kind" in
*"static-pie linked"* | *"statically linked"*) pass "file says: $kind" ;;
*) fail "the binary is not statically linked: $kind" ;;
esac
if LC_ALL=C readelf -l "$bin" | grep -q "INTERP"; then fail "the binary asks for a program interpreter"; fi
[ -z "$(LC_ALL=C readelf -d "$bin" | grep NEEDED || true)" ] || fail "the binary needs shared libraries: $(readelf -d "$bin" | grep NEEDED)"

# What build.rs put in --version: the commit, where git can name it.
if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
    long_version="unixagent $version (commit $commit)"
else
    long_version="unixagent $version"
fi
[ "$(env -i "$bin" --version)" = "$long_version" ] ||
    fail "--version with an empty environment printed: $(env -i "$bin" --version 2>&1)"
[ "$(env -i "$bin" -c 'echo dash-c-works')" = "dash-c-works" ] || fail "-c with an empty environment"
env -i "$bin" policy explain 'ls -la' >"$work/explain.txt" || fail "policy explain ls with an empty environment: $(cat "$work/explain.txt")"
grep -q "risk: read_only" "$work/explain.txt" || fail "policy explain: $(cat "$work/explain.txt")"
set +e
env -i "$bin" policy explain 'rm -rf /' >/dev/null
code=$?
set -e
[ "$code" -eq 2 ] || fail "policy explain 'rm -rf /' exited $code, not 2 (denied)"
pass "runs with an empty environment: --version, -c, the gate (allow and deny)"

# A bare root: the binary and busybox's static sh, nothing else (no /etc,
# no /proc, no /dev, no /tmp).
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && file -b "$busybox" | grep -q "statically linked" ||
    fail "a static busybox is needed for the chroot (Debian: busybox-static; scripts/test-deps.sh installs it)"
root="$work/root"
mkdir -p "$root/bin"
cp "$bin" "$root/unixagent"
cp "$busybox" "$root/bin/sh"
chroot=$(PATH="$PATH:/usr/sbin:/sbin" command -v chroot) || fail "chroot(8) is not installed"
# The environment is emptied outside: there is no env(1) inside.
in_root() { $sudo env -i HOME=/ SHELL=/bin/sh "$chroot" "$root" "$@" 2>&1; }
out=$(in_root /unixagent --version) || fail "--version in the chroot: $out"
[ "$out" = "$long_version" ] || fail "--version in the chroot printed: $out"
out=$(in_root /unixagent -c 'echo in-the-chroot') || fail "-c in the chroot: $out"
[ "$out" = "in-the-chroot" ] || fail "-c in the chroot printed: $out"
out=$(in_root /unixagent policy explain 'cat notes.txt') || fail "policy explain in the chroot: $out"
echo "$out" | grep -q "risk: read_only" || fail "policy explain in the chroot: $out"
set +e
out=$(in_root /unixagent doctor --offline)
code=$?
set -e
# There is no bash, zsh or fish in there: doctor says so, and exits 1.
[ "$code" -eq 1 ] && echo "$out" | grep -q "none of bash, zsh and fish is installed" ||
    fail "doctor in the chroot exited $code:
$out"
pass "runs in a bare chroot: --version, -c, the gate, doctor"

# One agent command: the fake model proposes a read-only command, the gate
# lets it through, it runs in the sandbox, its output goes back.
mkdir -p "$work/home" "$work/proj"
echo "static-build-notes" >"$work/proj/notes.txt"
cat >"$work/scenario.toml" <<'EOF'
[[turn]]
text = "Reading it."
tool_calls = [{ name = "shell", input = { command = "cat notes.txt" } }]

[[turn]]
text = "It holds the notes."
EOF
"$CARGO" build -q -p ua-testkit
testkit="${CARGO_TARGET_DIR:-target}/debug/ua-testkit"
"$testkit" serve "$work/scenario.toml" >"$work/url" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
    [ -s "$work/url" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "the fake model did not start: $(cat "$work/server.log")"
    sleep 0.1
done
url=$(head -n1 "$work/url")
[ -n "$url" ] || fail "the fake model printed no URL"
set +e
(cd "$work/proj" && env -i HOME="$work/home" PATH=/usr/bin:/bin SHELL=/bin/bash \
    ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=fake "$bin" --json -c '# what is in notes.txt?' \
    </dev/null >"$work/events.jsonl" 2>"$work/stderr.txt")
code=$?
set -e
[ "$code" -eq 0 ] || fail "the agent run exited $code: $(cat "$work/stderr.txt") $(cat "$work/events.jsonl")"
grep -q '"decision":"allow"' "$work/events.jsonl" || fail "the gate did not allow cat: $(cat "$work/events.jsonl")"
grep -q 'static-build-notes' "$work/events.jsonl" || fail "the command's output is missing: $(cat "$work/events.jsonl")"
grep -q '"type":"result"' "$work/events.jsonl" || fail "no result event: $(cat "$work/events.jsonl")"
pass "an agent command: the gate allowed it, it ran in the sandbox, its output came back"

# --- the Debian package ---------------------------------------------------
[ -f "$deb" ] || fail "$deb is missing: run \`make deb\` first"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep -v '/$' | sort)
want_deb="./usr/bin/unixagent
./usr/share/bash-completion/completions/unixagent
./usr/share/doc/unixagent/LICENSE-APACHE
./usr/share/doc/unixagent/LICENSE-MIT
./usr/share/doc/unixagent/README.md
./usr/share/doc/unixagent/copyright
./usr/share/fish/vendor_completions.d/unixagent.fish
./usr/share/man/man1/unixagent.1.gz
./usr/share/zsh/vendor-completions/_unixagent"
[ "$contents" = "$want_deb" ] || fail "the package holds:
$contents
instead of:
$want_deb"
dpkg-deb -f "$deb" Description | grep -q "unixagent doctor" || fail "the package's description: $(dpkg-deb -f "$deb" Description)"
pass "package contents and description"
if dpkg-query -W -f='${Status}' unixagent 2>/dev/null | grep -q "install ok installed"; then
    fail "a unixagent package is installed already; remove it first (dpkg -r unixagent)"
fi
$sudo dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb"
[ "$(/usr/bin/unixagent --version)" = "$long_version" ] || fail "the installed binary: $(/usr/bin/unixagent --version 2>&1)"
cmp -s /usr/bin/unixagent "$bin" || fail "the package's binary is not the tarball's"
man -w unixagent | grep -q "^/usr/share/man/man1/unixagent.1.gz$" || fail "man does not find the installed page"
man -P cat unixagent 2>/dev/null | grep -q "EXIT STATUS" || fail "man does not render the installed page"
bash -c '. /usr/share/bash-completion/completions/unixagent && complete -p unixagent' | grep -q _clap_complete_unixagent ||
    fail "the installed bash completion does not load"
pass "dpkg -i, and the installed unixagent runs"
$sudo dpkg -r unixagent >/dev/null || fail "dpkg -r unixagent"
for f in $contents; do
    [ ! -e "${f#.}" ] || fail "dpkg -r left ${f#.} behind"
done
status=$(dpkg-query -W -f='${Status}' unixagent 2>/dev/null || true)
case "$status" in
"" | *not-installed*) ;;
*) fail "after dpkg -r the package's status is: $status" ;;
esac
pass "dpkg -r removed every file"
