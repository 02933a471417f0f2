# unixagent shell integration for zsh: .zshenv shim.
#
# unixagent points ZDOTDIR at a private directory holding this file and the
# .zprofile and .zshrc shims, so zsh reads them instead of the user's. Each
# shim loads the user's real file with ZDOTDIR set back to the user's value
# (their files may read it), then points it at the shim directory again so
# zsh finds the next shim.
__ua_shim_dir=$ZDOTDIR
if [[ -n "${__UA_USER_ZDOTDIR+x}" ]]; then
    ZDOTDIR=$__UA_USER_ZDOTDIR
else
    ZDOTDIR=$HOME
fi
[[ -r "$ZDOTDIR/.zshenv" ]] && . "$ZDOTDIR/.zshenv"
__ua_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__ua_shim_dir
