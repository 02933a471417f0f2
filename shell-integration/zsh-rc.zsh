# unixagent shell integration for zsh: .zshrc shim.
#
# Loads the user's .zshrc, then adds the OSC 133 / OSC 7 hooks. Hooks are
# installed after the user's start-up files (after .zlogin too, for a
# login shell), and put back in place at every prompt: frameworks add
# their hooks later (add-zsh-hook appends), reorder them (powerlevel10k
# keeps its own last) or assign the arrays outright. Every 133 marker
# ends with `;aid=$__ua_aid`, this session's id, which unixagent writes as
# this file's first line (not exported, so a nested shell cannot print it).
__ua_zdotdir_user
if [[ -r "${ZDOTDIR:-$HOME}/.zshrc" ]]; then
    . "${ZDOTDIR:-$HOME}/.zshrc"
    __ua_status=$? __ua_last=$_
fi

typeset -gi __ua_ran=0
typeset -g __ua_url=

# Percent-encodes $1 into __ua_url, byte by byte.
__ua_url_path() {
    emulate -L zsh
    local LC_ALL=C s=$1 c
    local -i i
    __ua_url=
    for (( i = 1; i <= ${#s}; i++ )); do
        c=${s[i]}
        if [[ $c == [a-zA-Z0-9/._~-] ]]; then
            __ua_url+=$c
        else
            printf -v c '%02X' "'$c"
            __ua_url+=%${c[-2,-1]}
        fi
    done
}

# Our hooks return 0 whatever the command's status: zsh hands each hook
# the command's $? itself, and a hook that fails runs the user's ZERR trap.
#
# zsh runs a DEBUG trap before every command, inside functions too. Each
# hook of ours sets it aside for its own run (`emulate -L` makes traps
# local, so the user's comes back as the hook returns): a user's DEBUG
# trap sees the two or three lines that do that, never the rest (the
# markers, a loop over every byte of $PWD).
__ua_precmd_first() {
    local ret=$?
    emulate -L zsh
    trap - DEBUG
    # An instant prompt (powerlevel10k's) points stdout at a file until its
    # own precmd runs, and shows whatever landed there as console output
    # from start-up: the markers go to the terminal, like the prompt.
    if [[ ! -t 1 ]] && { : >/dev/tty } 2>/dev/null; then
        __ua_prompt_start $ret >/dev/tty
    else
        __ua_prompt_start $ret
    fi
    return 0
}

# D for status $1 if a command ran, the working directory, A.
__ua_prompt_start() {
    emulate -L zsh
    if (( __ua_ran )); then
        print -n "\e]133;D;$1;aid=$__ua_aid\a"
        __ua_ran=0
    fi
    __ua_url_path "$PWD"
    print -rn -- $'\e]7;file://'"${HOST}${__ua_url}"$'\a'
    print -n "\e]133;A;aid=$__ua_aid\a"
}

__ua_precmd_last() {
    emulate -L zsh
    trap - DEBUG
    # Prompt frameworks may rebuild PS1 in their own precmd; re-append B.
    if [[ "$PS1" != *$'\e]133;B;aid='"$__ua_aid"$'\a'* ]]; then
        PS1+=$'%{\e]133;B;aid='"$__ua_aid"$'\a%}'
    fi
    __ua_install_hooks
    return 0
}

__ua_preexec() {
    emulate -L zsh
    trap - DEBUG
    if [[ ! -t 1 ]] && { : >/dev/tty } 2>/dev/null; then
        __ua_preexec "$@" >/dev/tty
        return 0
    fi
    __ua_ran=1
    print -n "\e]133;C;aid=$__ua_aid\a"
    __ua_install_hooks
    return 0
}

# Our first precmd reads $? and draws A before anything else prints, our
# last appends B after everything else has rebuilt PS1. zsh runs the
# hooks from a copy of the array, so changes here apply from the next
# prompt; the preexec hook restores the precmd ones and the other way
# round, so one array assigned outright loses nothing for long.
__ua_install_hooks() {
    emulate -L zsh
    if [[ ${precmd_functions[1]-} != __ua_precmd_first || ${precmd_functions[-1]-} != __ua_precmd_last ]]; then
        precmd_functions=(__ua_precmd_first ${precmd_functions:#__ua_precmd_(first|last)} __ua_precmd_last)
    fi
    if [[ -z ${(M)preexec_functions:#__ua_preexec} ]]; then
        preexec_functions+=(__ua_preexec)
    fi
}

# Hands ZDOTDIR back to the user for good and installs the hooks. After
# it, the last line of the last shim leaves the $? and $_ of the user's
# last start-up file (without failing, which would run their ZERR trap).
__ua_finish() {
    emulate -L zsh
    __ua_zdotdir_user
    unset __ua_shim_dir __ua_zd __ua_zd_set __ua_zd_export
    unfunction __ua_zdotdir_user __ua_zdotdir_shim __ua_finish
    __ua_install_hooks
}

__ua_set_status() {
    return $1
}

__ua_ok() {
    return 0
}

# A login shell reads .zlogin next: our shim there finishes. (Without
# RCS set, zsh reads no further file.)
if [[ -o login && -o rcs ]]; then
    __ua_zdotdir_shim
    __ua_install_hooks
else
    __ua_finish
    __ua_set_status $__ua_status "$__ua_last" && __ua_ok "$__ua_last"
fi
