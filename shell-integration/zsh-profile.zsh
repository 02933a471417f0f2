# unixagent shell integration for zsh: .zprofile shim (login shells only).
__ua_zdotdir_user
if [[ -r "${ZDOTDIR:-$HOME}/.zprofile" ]]; then
    . "${ZDOTDIR:-$HOME}/.zprofile"
    __ua_status=$? __ua_last=$_
fi
__ua_zdotdir_shim
