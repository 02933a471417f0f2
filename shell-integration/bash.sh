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

# Set from PS0 through an array subscript, which bash evaluates as
# arithmetic while expanding PS0 (to nothing, as the element is unset).
# PS0's $(...) would run in a subshell and could not set anything, and a
# plain $((...)) would print its value.
__ua_ran=0
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
    if (( __ua_ran )); then
        printf '\e]133;D;%s;aid=%s\a' "$ret" "$__ua_aid"
        __ua_ran=0
    fi
    __ua_url_path "$PWD"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__ua_url"
    printf '\e]133;A;aid=%s\a' "$__ua_aid"
    return $ret
}

__ua_prompt_end() {
    local ret=$?
    # Prompt frameworks may rebuild PS1 on every prompt; re-append B last.
    if [[ "$PS1" != *"$__ua_mark_b" ]]; then
        PS1+=$__ua_mark_b
    fi
    if [[ "${PS0-}" != *'__ua_ran=1'* ]]; then
        PS0+='${__ua_unset[__ua_ran=1]}\e]133;C;aid='"$__ua_aid"'\a'
    fi
    return $ret
}

# Our start hook runs first (it must see the command's $?), our end hook
# last (after whatever else rewrites PS1).
if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
    PROMPT_COMMAND=(__ua_prompt_start "${PROMPT_COMMAND[@]}" __ua_prompt_end)
else
    PROMPT_COMMAND="__ua_prompt_start${PROMPT_COMMAND:+; $PROMPT_COMMAND}; __ua_prompt_end"
fi
