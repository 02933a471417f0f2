#!/usr/bin/env bash
# Installs what the test suite drives for real: the shells (bash, zsh, fish,
# dash), script(1) and setpriv(1) from util-linux, vim and python3 for full-screen and REPL
# tests, the prompt frameworks and tools the bash dotfile tests load
# (liquidprompt, powerline, direnv, fzf, zoxide, bash-completion), and for
# the remote tests an OpenSSH server and client on loopback with scp, rsync
# and git over them and libnss_wrapper (the test accounts live in a passwd
# file of the test's own). Debian and Ubuntu only; elsewhere it names what
# is missing.
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
[ ${#need[@]} -eq 0 ] && exit 0

if ! have apt-get; then
    echo "missing test dependencies: ${need[*]} (install them with your package manager)" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing test dependencies: ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
