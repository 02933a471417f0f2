# unixagent shell integration for bash.
#
# unixagent starts bash as `bash --rcfile <this file>`, so this file stands
# in for ~/.bashrc. It first loads the user's own startup files exactly as
# bash would have, then adds the OSC 133 prompt markers and OSC 7 working
# directory reports that unixagent follows:
#
#   133;A  prompt starts            (PROMPT_COMMAND, first)
#   133;B  prompt drawn, input next (end of PS1)
#   133;C  command starts           (PS0)
#   133;D;N command finished with N (PROMPT_COMMAND, first, reads $?)
#   7;file://host/cwd               (PROMPT_COMMAND)
#
# Every 133 marker ends with `;aid=$__ua_aid`, this session's id, which
# unixagent writes as the first line of this file (not exported, so a
# nested shell cannot print it): unixagent follows only markers with it.
#
# Nothing here prints visible text, and the user's PS1, PROMPT_COMMAND and
# hooks keep working: ours run around theirs. Nor does anything that
# watches commands see ours: see "Unseen" below.

if [[ -n "${__ua_loaded-}" ]]; then return; fi
__ua_loaded=1
# This file, as BASH_SOURCE names it for its own commands and for those of
# the functions it defines.
__ua_rc=${BASH_SOURCE[0]-}

# --- Unseen ---
#
# bash runs the DEBUG trap before every simple command, those of
# PROMPT_COMMAND and of this file included, and with `set -T` inside
# functions too. A user's DEBUG trap (a title set from $BASH_COMMAND,
# bash-preexec, liquidprompt, starship, a timer) would see our hooks run
# at every prompt, and bash has no way to run a command that trap does
# not see. So while the user has a DEBUG trap, the one bash holds is ours:
# it runs theirs, kept in __ua_trap_DEBUG, before every command but our
# own: those of this file and its functions (by BASH_SOURCE) and our calls
# in PROMPT_COMMAND (by their exact text, so that no command of the
# user's or the agent's named like ours hides). Theirs runs inside ours,
# so BASH_COMMAND, $?, $_ and the rest are what it would have seen.
#
# To hold theirs we must see it set, whenever that is: in their start-up
# files, from a prompt hook (bash-preexec installs at its first prompt),
# or at the prompt. So the `trap` builtin is wrapped by a function of the
# same name, defined before their files are read, and `trap -p` and
# `trap` show theirs. Being a function costs two things, both mended
# here. bash puts DEBUG, ERR and RETURN back on return as they were on
# entry unless they were set inside, so a function cannot clear them: it
# ignores them instead (`trap '' SIG`), which is the same. And a RETURN
# trap set inside a function runs when that function returns: ours skips
# the return of our own functions. Commands run from a trap show the
# trap's BASH_COMMAND to the DEBUG trap, so ours for RETURN marks itself
# busy before its first command (a `for` list is expanded before the
# DEBUG trap runs) and unmarks itself while expanding the user's action.
#
# Our calls in PROMPT_COMMAND pass "$_" last, so the user's entries after
# them see the $_ of the command line, and end in `&& __ua_ok`, so they
# hand on the command's status without failing (which would run the ERR
# trap once more).
__ua_unset=('' '')
# What stands in for the user's DEBUG and RETURN traps: theirs is written
# into the last arm (an `eval` would leave its own $_ behind).
__ua_trap_filter_DEBUG='case ${__ua_busy-}:${BASH_SOURCE-}:$BASH_COMMAND in 1:*|*:"$__ua_rc":*|*:*:__ua_ok|*:*:"__ua_ok \"\$_\""|*:*:"__ua_prompt_start \"\$_\""|*:*:"__ua_prompt_end \"\$_\"") ;; *) '
__ua_trap_filter_RETURN='for __ua_busy in ${__ua_unset[__ua_busy=1]}1; do case ${__ua_unset[__ua_busy=0]}${BASH_SOURCE-} in "$__ua_rc") ;; *) '
__ua_trap_filter_end_DEBUG=$'\n;; esac'
__ua_trap_filter_end_RETURN=$'\n;; esac; done'

__ua_ok() {
    return 0
}

__ua_set_status() {
    return "$1"
}

# Single-quotes $1 into __ua_q, as `trap -p` prints an action.
__ua_quote() {
    __ua_q=\'${1//\'/\'\\\'\'}\'
}

# bash 4.4 and later (`local -`): an older one gets nothing of ours, see
# below.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 )); then
    # The builtin, holding the user's DEBUG and RETURN traps (see above).
    trap() {
        local - ret=0 action s u v
        set +eux
        local -a rest=()
        if [[ ${1-} == -- ]]; then
            shift
        elif [[ ${1-} == -p ]]; then
            shift
            __ua_trap_print "$@"
            return
        elif [[ ${1-} == -?* ]]; then
            # -l, or options a newer bash knows.
            builtin trap "$@"
            return
        fi
        if (( $# == 0 )); then
            __ua_trap_print
            return
        elif (( $# == 1 )); then
            # `trap SIG` resets SIG; anything else is the builtin's to
            # answer.
            u=${1^^}
            case ${u#SIG} in
                DEBUG | ERR | RETURN) action=- ;;
                *) builtin trap "$@"; return ;;
            esac
        else
            action=$1
            shift
        fi
        for s in "$@"; do
            u=${s^^}
            u=${u#SIG}
            case $u in
                DEBUG | ERR | RETURN)
                    if [[ $action == - ]]; then
                        unset "__ua_trap_$u" "__ua_trap_held_$u"
                        builtin trap '' "$u"
                        continue
                    fi
                    printf -v "__ua_trap_$u" %s "$action"
                    v=$action
                    if [[ -n $action && $u != ERR ]]; then
                        v=__ua_trap_filter_$u
                        s=__ua_trap_filter_end_$u
                        v=${!v}$action${!s}
                    fi
                    printf -v "__ua_trap_held_$u" %s "$v"
                    builtin trap -- "$v" "$u"
                    ;;
                *) rest+=("$s") ;;
            esac
        done
        if (( ${#rest[@]} )); then
            builtin trap -- "$action" "${rest[@]}" || ret=$?
        fi
        return $ret
    }

    # `trap -p [SIG…]` as the builtin prints it, with the user's DEBUG, ERR
    # and RETURN traps for what stands in for them.
    __ua_trap_print() {
        local ret=0 out s u v
        if [[ ${1-} == -- ]]; then shift; fi
        if (( $# == 0 )); then
            out=$(builtin trap -p)
            # What stands in for them shows here when `set -T` or `set -E`
            # keeps it in force.
            for u in DEBUG ERR RETURN; do
                for v in __ua_trap_held_$u __ua_unset; do
                    __ua_quote "${!v-}"
                    out=${out/"trap -- $__ua_q $u"/}
                done
            done
            __ua_trim "$out"
            [[ -z $__ua_t ]] || printf '%s\n' "$__ua_t"
            set -- DEBUG ERR RETURN
        fi
        for s in "$@"; do
            u=${s^^}
            u=${u#SIG}
            case $u in
                DEBUG | ERR | RETURN)
                    v=__ua_trap_$u
                    if [[ -n ${!v+set} ]]; then
                        __ua_quote "${!v}"
                        printf 'trap -- %s %s\n' "$__ua_q" "$u"
                    fi
                    ;;
                *) builtin trap -p "$s" || ret=$? ;;
            esac
        done
        return $ret
    }
fi

# Trims surrounding white space from $1 into __ua_t.
__ua_trim() {
    __ua_t=${1#"${1%%[![:space:]]*}"}
    __ua_t=${__ua_t%"${__ua_t##*[![:space:]]}"}
}

# The $? and $_ the user's files leave are handed to the first prompt, as
# bash does without us.
__ua_status=0
__ua_last=
# --rcfile is ignored by login shells, so for a login session unixagent
# starts an interactive non-login bash and this file loads the login files
# in bash's order.
if [[ -n "${__UA_BASH_LOGIN-}" ]]; then
    unset __UA_BASH_LOGIN
    if [[ -r /etc/profile ]]; then . /etc/profile; __ua_status=$? __ua_last=$_; fi
    for __ua_f in ~/.bash_profile ~/.bash_login ~/.profile; do
        if [[ -r "$__ua_f" ]]; then . "$__ua_f"; __ua_status=$? __ua_last=$_; break; fi
    done
    unset __ua_f
else
    # Debian's bash reads /etc/bash.bashrc itself even with --rcfile.
    if [[ -r ~/.bashrc ]]; then . ~/.bashrc; __ua_status=$? __ua_last=$_; fi
fi

# PS0 (for 133;C) and `local -` need bash 4.4. Say why rather than fail at
# every prompt; unixagent quotes this line when no marker arrives.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 404 )); then
    printf 'unixagent: bash %s is too old for shell integration (4.4 or later is needed)\n' "$BASH_VERSION" >&2
    return
fi

# Set from PS0 through an array subscript, which bash evaluates as
# arithmetic while expanding PS0 (to nothing: element 1 exists and is
# empty, so `set -u` in the user's start-up files does not object). PS0's
# $(...) would run in a subshell and could not set anything, and a plain
# $((...)) would print its value.
__ua_ran=0
# B as PS1 text (\[ \] mark it as taking no room on the line).
__ua_mark_b='\[\e]133;B;aid='"$__ua_aid"'\a\]'
# Our PROMPT_COMMAND entries (see "Unseen").
__ua_pc_start='__ua_prompt_start "$_" && __ua_ok "$_"'
__ua_pc_end='__ua_prompt_end "$_" && __ua_ok "$_"'

# Percent-encodes $1 into __ua_url without forking a subshell.
__ua_url_path() {
    local LC_ALL=C s=$1 c i
    __ua_url=
    for (( i = 0; i < ${#s}; i++ )); do
        c=${s:i:1}
        case $c in
            [a-zA-Z0-9/._~-]) __ua_url+=$c ;;
            *) printf -v c '%02X' "'$c"; __ua_url+=%${c: -2} ;;
        esac
    done
}

__ua_prompt_start() {
    local ret=$?
    # Our hooks run under the user's shell options; `set -u` or `set -e`
    # from their start-up files must not turn them into errors, and under
    # `set -x` (`unixagent --shell-debug`) only the user's hooks are traced.
    local -
    set +eux
    if (( __ua_ran )); then
        printf '\e]133;D;%s;aid=%s\a' "$ret" "$__ua_aid"
        __ua_ran=0
    fi
    # Only ever left set by a command that set it.
    __ua_busy=
    __ua_url_path "$PWD"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__ua_url"
    printf '\e]133;A;aid=%s\a' "$__ua_aid"
    __ua_prompt_markers
    # Something may have edited PROMPT_COMMAND since the last prompt: put
    # our hooks back in place for the next one.
    __ua_hook
    return $ret
}

__ua_prompt_end() {
    local ret=$?
    local -
    set +eux
    __ua_prompt_markers
    return $ret
}

# Appends B to PS1 and C to PS0 where they are missing. Prompt frameworks
# may rebuild PS1 on every prompt, so the end hook does this again after
# them; the start hook does it too, in case the end hook does not get to
# run (a user's entry that fails to parse stops the rest of a string
# PROMPT_COMMAND).
__ua_prompt_markers() {
    if [[ "$PS1" != *"$__ua_mark_b" ]]; then
        PS1+=$__ua_mark_b
    fi
    if [[ "${PS0-}" != *'__ua_ran=1'* ]]; then
        PS0+='${__ua_unset[__ua_ran=1]}\e]133;C;aid='"$__ua_aid"'\a'
    fi
}

# One PROMPT_COMMAND entry ($1) without our hooks, trimmed, into __ua_t.
# A tool that joined its own entry to ours with `;` leaves a no-op of ours
# in its place (a `;` of its own may start or end the line).
__ua_clean() {
    local e=$1
    e=${e//"$__ua_pc_start"/__ua_ok}
    e=${e//"$__ua_pc_end"/__ua_ok}
    e=$'\n'$e$'\n'
    while [[ $e == *$'\n__ua_ok\n'* ]]; do e=${e//$'\n__ua_ok\n'/$'\n'}; done
    __ua_trim "$e"
}

# PROMPT_COMMAND is kept in this order (entries joined by newlines, or
# array elements if the user made it an array):
#
#   [bash-preexec's first]  __ua_prompt_start  USER…  [__ua_prompt_end]  [bash-preexec's last]
#
# The start hook comes first because it reads the command's $?; only
# bash-preexec's first entry may run before it, as that one hands $? on.
# Entries are joined with newlines, never `;`: a user's entry may end in
# `;` (pyenv-virtualenv's does), `&` or a comment.
#
# The end hook runs after whatever rebuilds PS1. bash-preexec takes the
# first command after its last entry for the user's (which only sets its
# flag), so ours goes just before it. No DEBUG trap sees either of ours
# (see "Unseen").
__ua_hook() {
    local -
    set +eux
    local IFS=$'\n' pro= tail= last f
    local -a mid=() new=()
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        for f in "${PROMPT_COMMAND[@]}"; do
            __ua_clean "$f"
            [[ -z $__ua_t ]] || mid+=("$__ua_t")
        done
    else
        __ua_clean "${PROMPT_COMMAND-}"
        [[ -z $__ua_t ]] || mid=("$__ua_t")
    fi
    if [[ ${mid[0]-} == __bp_precmd_invoke_cmd* ]]; then
        pro=${mid[0]%%$'\n'*}
        __ua_clean "${mid[0]:${#pro}}"
        if [[ -n $__ua_t ]]; then mid[0]=$__ua_t; else mid=("${mid[@]:1}"); fi
    fi
    if (( ${#mid[@]} )); then
        last=${mid[-1]}
        if [[ -n ${__bp_install_string-} && $last == *"$__bp_install_string" ]]; then
            tail=$__bp_install_string
        elif [[ $last == __bp_interactive_mode || $last == *$'\n'__bp_interactive_mode ]]; then
            tail=__bp_interactive_mode
        fi
        if [[ -n $tail ]]; then
            __ua_clean "${last%"$tail"}"
            if [[ -n $__ua_t ]]; then mid[-1]=$__ua_t; else unset 'mid[-1]'; fi
        fi
    fi
    # With nothing of the user's after it, the start hook has already
    # appended the markers.
    new=(${pro:+"$pro"} "$__ua_pc_start" "${mid[@]}" ${mid[0]+"$__ua_pc_end"} ${tail:+"$tail"})
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        if [[ "${new[*]}" != "${PROMPT_COMMAND[*]}" || ${#new[@]} != "${#PROMPT_COMMAND[@]}" ]]; then
            PROMPT_COMMAND=("${new[@]}")
        fi
    elif [[ "${new[*]}" != "${PROMPT_COMMAND-}" ]]; then
        PROMPT_COMMAND="${new[*]}"
    fi
    return 0
}

# Bash 5.1+ runs each element of an array PROMPT_COMMAND; an older bash
# runs only the first, so keep a string there whatever the user wrote.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 501 )) && [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    __ua_t=${PROMPT_COMMAND[0]}
    unset PROMPT_COMMAND
    PROMPT_COMMAND=$__ua_t
fi
__ua_hook
__ua_set_status "$__ua_status" "$__ua_last" && __ua_ok "$__ua_last"
