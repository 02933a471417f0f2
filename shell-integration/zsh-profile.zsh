# unixagent shell integration for zsh: .zprofile shim (login shells only).
__ua_zdotdir_user
[[ -r "${ZDOTDIR:-$HOME}/.zprofile" ]] && . "${ZDOTDIR:-$HOME}/.zprofile"
__ua_zdotdir_shim
