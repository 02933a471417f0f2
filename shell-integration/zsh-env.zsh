# unixagent shell integration for zsh: .zshenv shim.
#
# unixagent points ZDOTDIR at a private directory holding this file and the
# .zprofile, .zshrc and .zlogin shims, so zsh reads them instead of the
# user's. Each shim loads the user's real file with ZDOTDIR as the user's
# files see it (unset, or the value they gave it: an XDG layout sets it in
# ~/.zshenv), then points it at the shim directory again so zsh finds the
# next shim. The last shim hands ZDOTDIR back for good.
# The $? and $_ the start-up files leave, handed to the first prompt as zsh
# does without us (each shim notes them after the user's file it reads).
typeset -g __ua_status=$? __ua_last=$_
typeset -g __ua_shim_dir=$ZDOTDIR
# What the user's ZDOTDIR is: set or not, its value, exported or not.
typeset -gi __ua_zd_set=0 __ua_zd_export=0
typeset -g __ua_zd=
if [[ -n "${__UA_USER_ZDOTDIR+x}" ]]; then
    __ua_zd_set=1 __ua_zd_export=1 __ua_zd=$__UA_USER_ZDOTDIR
fi
unset __UA_USER_ZDOTDIR

# ZDOTDIR as the user's files left it.
__ua_zdotdir_user() {
    emulate -L zsh
    if (( __ua_zd_set )); then
        if (( __ua_zd_export )); then
            export ZDOTDIR=$__ua_zd
        else
            typeset -g +x ZDOTDIR=$__ua_zd
        fi
    else
        unset ZDOTDIR
    fi
}

# Remembers what the user's file just did to ZDOTDIR, then points zsh at
# the next shim (not exported: nothing the user starts may inherit it).
__ua_zdotdir_shim() {
    emulate -L zsh
    __ua_zd_set=${+ZDOTDIR} __ua_zd=${ZDOTDIR-} __ua_zd_export=0
    [[ ${(t)ZDOTDIR-} == *export* ]] && __ua_zd_export=1
    unset ZDOTDIR
    typeset -g ZDOTDIR=$__ua_shim_dir
}

__ua_zdotdir_user
if [[ -r "${ZDOTDIR:-$HOME}/.zshenv" ]]; then
    . "${ZDOTDIR:-$HOME}/.zshenv"
    __ua_status=$? __ua_last=$_
fi
__ua_zdotdir_shim
