# unixagent shell integration for zsh: .zlogin shim (login shells only).
#
# zsh reads .zlogin after .zshrc, so a login shell installs the hooks
# again here: a .zlogin may assign precmd_functions outright.
__ua_zdotdir_user
if [[ -r "${ZDOTDIR:-$HOME}/.zlogin" ]]; then
    . "${ZDOTDIR:-$HOME}/.zlogin"
    __ua_status=$? __ua_last=$_
fi
__ua_finish
__ua_set_status $__ua_status "$__ua_last" && __ua_ok "$__ua_last"
