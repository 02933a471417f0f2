# unixagent shell integration for zsh: .zprofile shim (login shells only).
ZDOTDIR=$__ua_user_zdotdir
[[ -r "$ZDOTDIR/.zprofile" ]] && . "$ZDOTDIR/.zprofile"
__ua_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__ua_shim_dir
