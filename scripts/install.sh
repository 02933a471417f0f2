#!/usr/bin/env bash
# `make install`, `make uninstall`, `make install-login-shell` and
# `make uninstall-login-shell`: see the Makefile for the variables.
#
#   install.sh install          BIN, PREFIX, DESTDIR (BUILD=1: build BIN first)
#   install.sh uninstall        PREFIX, DESTDIR
#   install.sh login-shell      PREFIX, SHELLS_FILE
#   install.sh no-login-shell   PREFIX, SHELLS_FILE
#
# Installed: the binary, the man page, and a completion script for each
# shell where that shell looks for it. The man page and the completions
# are written by the binary being installed, so they always match it.
# Uninstall removes exactly these files, then the directories that held
# them if that left them empty (never PREFIX itself).
set -euo pipefail

action=${1:-}
prefix=${PREFIX:-/usr/local}
root="${DESTDIR:-}$prefix"
shells_file=${SHELLS_FILE:-/etc/shells}

# Each installed file, relative to PREFIX.
BIN_FILE=bin/unixagent
MAN_FILE=share/man/man1/unixagent.1
BASH_FILE=share/bash-completion/completions/unixagent
ZSH_FILE=share/zsh/site-functions/_unixagent
FISH_FILE=share/fish/vendor_completions.d/unixagent.fish
FILES=("$BIN_FILE" "$MAN_FILE" "$BASH_FILE" "$ZSH_FILE" "$FISH_FILE")

die() {
    echo "install.sh: $*" >&2
    exit 1
}

install_files() {
    local bin=${BIN:?BIN names the binary to install}
    if [ "${BUILD:-0}" = 1 ]; then
        if command -v "${CARGO:-cargo}" >/dev/null 2>&1; then
            "${CARGO:-cargo}" build --release -p unixagent
        elif [ -x "$bin" ]; then
            echo "install.sh: cargo is not on PATH here (sudo?); installing $bin as built before" >&2
        else
            die "$bin does not exist and cargo is not on PATH: run \`make build\` first, then \`make install\`"
        fi
    fi
    [ -x "$bin" ] || die "$bin is not an executable: build it first (\`make build\`) or name one with BIN=…"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$bin" __man >"$tmp/unixagent.1"
    "$bin" completions bash >"$tmp/bash"
    "$bin" completions zsh >"$tmp/zsh"
    "$bin" completions fish >"$tmp/fish"
    install -D -m 0755 "$bin" "$root/$BIN_FILE"
    install -D -m 0644 "$tmp/unixagent.1" "$root/$MAN_FILE"
    install -D -m 0644 "$tmp/bash" "$root/$BASH_FILE"
    install -D -m 0644 "$tmp/zsh" "$root/$ZSH_FILE"
    install -D -m 0644 "$tmp/fish" "$root/$FISH_FILE"
    for f in "${FILES[@]}"; do
        echo "installed $root/$f"
    done
}

uninstall_files() {
    local f dir
    for f in "${FILES[@]}"; do
        if [ -e "$root/$f" ] || [ -L "$root/$f" ]; then
            rm -f "$root/$f"
            echo "removed $root/$f"
        fi
    done
    # The directories the files were in, deepest first, while empty.
    for f in "${FILES[@]}"; do
        dir=$(dirname "$f")
        while [ "$dir" != . ] && [ -d "$root/$dir" ] && rmdir "$root/$dir" 2>/dev/null; do
            dir=$(dirname "$dir")
        done
    done
}

login_shell() {
    local path="$prefix/$BIN_FILE"
    [ -x "$path" ] || die "$path is not installed: run \`make install\` first"
    if grep -qxF "$path" "$shells_file" 2>/dev/null; then
        echo "$path is already in $shells_file"
    else
        [ -w "$shells_file" ] || die "$shells_file cannot be written: run this as root (sudo make install-login-shell)"
        echo "$path" >>"$shells_file"
        echo "added $path to $shells_file"
    fi
    cat <<EOF

To make unixagent your login shell:  chsh -s $path
Set the shell it runs in ~/.config/unixagent/config.toml first, for example
    [shell]
    command = "/bin/zsh"
(otherwise it runs /bin/bash, since \$SHELL will be unixagent itself).

Keep a way back: if a session ever fails to start, \`chsh -s /bin/bash\`
gets your old shell back, from any terminal that still works, or over
\`ssh HOST chsh -s /bin/bash\` (ssh with a command runs it in your real
shell, not in a unixagent session). \`unixagent doctor\` says what is wrong.
EOF
}

no_login_shell() {
    local path="$prefix/$BIN_FILE"
    grep -qxF "$path" "$shells_file" 2>/dev/null || {
        echo "$path is not in $shells_file"
        return 0
    }
    [ -w "$shells_file" ] || die "$shells_file cannot be written: run this as root"
    local kept
    kept=$(grep -vxF "$path" "$shells_file" || true)
    printf '%s\n' "$kept" >"$shells_file"
    echo "removed $path from $shells_file (change the login shell of any account still using it with chsh)"
}

case "$action" in
install) install_files ;;
uninstall) uninstall_files ;;
login-shell) login_shell ;;
no-login-shell) no_login_shell ;;
*) die "usage: install.sh install|uninstall|login-shell|no-login-shell" ;;
esac
