# unixagent shell integration for zsh: .zshrc shim.
#
# Loads the user's .zshrc, adds the OSC 133 / OSC 7 hooks, and hands
# ZDOTDIR back to the user for good, so a login shell then reads the user's
# own .zlogin directly. Every 133 marker ends with `;aid=$__ua_aid`, this
# session's id, which unixagent writes as this file's first line (not
# exported, so a nested shell cannot print it).
ZDOTDIR=$__ua_user_zdotdir
[[ -r "$ZDOTDIR/.zshrc" ]] && . "$ZDOTDIR/.zshrc"
if [[ -n "${__UA_USER_ZDOTDIR+x}" ]]; then
    ZDOTDIR=$__UA_USER_ZDOTDIR
else
    unset ZDOTDIR
fi
unset __ua_shim_dir __ua_user_zdotdir __UA_USER_ZDOTDIR

typeset -gi __ua_ran=0

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

__ua_precmd_first() {
    local ret=$?
    if (( __ua_ran )); then
        print -n "\e]133;D;$ret;aid=$__ua_aid\a"
        __ua_ran=0
    fi
    __ua_url_path "$PWD"
    print -rn -- $'\e]7;file://'"${HOST}${__ua_url}"$'\a'
    print -n "\e]133;A;aid=$__ua_aid\a"
    return $ret
}

__ua_precmd_last() {
    # Prompt frameworks may rebuild PS1 in their own precmd; re-append B.
    if [[ "$PS1" != *$'\e]133;B;aid='"$__ua_aid"$'\a'* ]]; then
        PS1+=$'%{\e]133;B;aid='"$__ua_aid"$'\a%}'
    fi
}

__ua_preexec() {
    __ua_ran=1
    print -n "\e]133;C;aid=$__ua_aid\a"
}

# First precmd reads $? before anything else runs; last precmd fixes PS1
# after everything else has.
precmd_functions=(__ua_precmd_first $precmd_functions __ua_precmd_last)
preexec_functions+=(__ua_preexec)
