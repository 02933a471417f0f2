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
# hooks keep working: ours run around theirs.

if [[ -n "${__ua_loaded-}" ]]; then return; fi
__ua_loaded=1

# --rcfile is ignored by login shells, so for a login session unixagent
# starts an interactive non-login bash and this file loads the login files
# in bash's order.
if [[ -n "${__UA_BASH_LOGIN-}" ]]; then
    unset __UA_BASH_LOGIN
    if [[ -r /etc/profile ]]; then . /etc/profile; fi
    for __ua_f in ~/.bash_profile ~/.bash_login ~/.profile; do
        if [[ -r "$__ua_f" ]]; then . "$__ua_f"; break; fi
    done
    unset __ua_f
else
    # Debian's bash reads /etc/bash.bashrc itself even with --rcfile.
    if [[ -r ~/.bashrc ]]; then . ~/.bashrc; fi
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
__ua_unset=('' '')
# Set by the end hook; the start hook checks it to notice a lost end hook.
__ua_end_ran=1
# The user's function that runs our end hook after itself (see __ua_hook).
__ua_wrapped=
# B as PS1 text (\[ \] mark it as taking no room on the line).
__ua_mark_b='\[\e]133;B;aid='"$__ua_aid"'\a\]'

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
    __ua_url_path "$PWD"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__ua_url"
    printf '\e]133;A;aid=%s\a' "$__ua_aid"
    __ua_prompt_markers
    # Something may have edited PROMPT_COMMAND (or redefined the function
    # our end hook rides on) since the last prompt: put our hooks back in
    # place for the next one.
    __ua_hook "$__ua_end_ran"
    __ua_end_ran=0
    return $ret
}

__ua_prompt_end() {
    local ret=$?
    local -
    set +eux
    __ua_end_ran=1
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

# Trims surrounding white space from $1 into __ua_t.
__ua_trim() {
    __ua_t=${1#"${1%%[![:space:]]*}"}
    __ua_t=${__ua_t%"${__ua_t##*[![:space:]]}"}
}

# One PROMPT_COMMAND entry ($1) without our hooks, trimmed, into __ua_t.
__ua_clean() {
    local e=$1
    e=${e//__ua_prompt_start/:}
    e=${e//__ua_prompt_end/:}
    e=$'\n'$e$'\n'
    while [[ $e == *$'\n:\n'* ]]; do e=${e//$'\n:\n'/$'\n'}; done
    __ua_trim "$e"
    [[ $__ua_t == : ]] && __ua_t=
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
# The end hook must run after whatever rebuilds PS1, but a command of ours
# after the user's last hook would be seen by their DEBUG trap, and
# bash-preexec, liquidprompt and starship take the first command after
# their last prompt hook to be the user's own: their preexec (timers,
# titles, history tools such as atuin) would fire for our hook instead. So
# when the user's last entry ends in a call of a shell function, that
# function is wrapped, under its own name, to run our end hook after
# itself; otherwise the end hook is an entry of its own. bash-preexec's
# last entry only sets its flag, so ours goes just before it.
#
# $1 is 0 when the end hook did not run at the last prompt: the wrapped
# function may have been redefined, so check it again.
__ua_hook() {
    local -
    set +eux
    local IFS=$'\n' pro= tail= end=__ua_prompt_end last f
    local -a mid=() new=()
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        for f in "${PROMPT_COMMAND[@]}"; do
            __ua_clean "$f"
            [[ -n $__ua_t ]] && mid+=("$__ua_t")
        done
    else
        __ua_clean "${PROMPT_COMMAND-}"
        [[ -n $__ua_t ]] && mid=("$__ua_t")
    fi
    if [[ ${mid[0]} == __bp_precmd_invoke_cmd* ]]; then
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
    if (( ${#mid[@]} == 0 )); then
        # Nothing of the user's runs after our start hook, which has
        # already appended the markers.
        end=
    elif [[ -z $tail ]]; then
        # The last simple command of the last entry, if it is plain words.
        last=${mid[-1]##*$'\n'}
        while [[ $last == *[\;[:space:]] ]]; do last=${last%?}; done
        last=${last##*;}
        __ua_trim "$last"
        f=${__ua_t%%[[:space:]]*}
        if [[ $__ua_t =~ ^[[:alnum:]_.:@%+,/=-]+([[:space:]]+[[:alnum:]_.:@%+,/=-]+)*$ ]] \
            && [[ $f != __ua_* && $f != __bp_* ]] && declare -F -- "$f" >/dev/null \
            && __ua_wrap "$f" "$1"; then
            end=
        fi
    fi
    new=(${pro:+"$pro"} __ua_prompt_start "${mid[@]}" ${end:+"$end"} ${tail:+"$tail"})
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        if [[ "${new[*]}" != "${PROMPT_COMMAND[*]}" || ${#new[@]} != "${#PROMPT_COMMAND[@]}" ]]; then
            PROMPT_COMMAND=("${new[@]}")
        fi
    elif [[ "${new[*]}" != "${PROMPT_COMMAND-}" ]]; then
        PROMPT_COMMAND="${new[*]}"
    fi
}

# Makes function $1 run our end hook after itself, keeping its name (which
# is what a DEBUG trap sees) and its status. $2 = 0: check it again.
__ua_wrap() {
    local f=$1 def
    if [[ $f == "$__ua_wrapped" && $2 != 0 ]]; then return 0; fi
    def=$(declare -f -- "$f") || return 1
    if [[ $def != *__ua_prompt_end* ]]; then
        eval "__ua_orig_$f${def#"$f"}" || return 1
        eval "$f() { __ua_orig_$f \"\$@\"; __ua_prompt_end; }" || return 1
    fi
    __ua_wrapped=$f
}

# Bash 5.1+ runs each element of an array PROMPT_COMMAND; an older bash
# runs only the first, so keep a string there whatever the user wrote.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 501 )) && [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    __ua_t=${PROMPT_COMMAND[0]}
    unset PROMPT_COMMAND
    PROMPT_COMMAND=$__ua_t
fi
__ua_hook 0
