# unixagent shell integration for zsh: .zlogin shim (login shells only).
#
# zsh reads .zlogin after .zshrc, so a login shell installs the hooks
# again here: a .zlogin may assign precmd_functions outright.
__ua_zdotdir_user
[[ -r "${ZDOTDIR:-$HOME}/.zlogin" ]] && . "${ZDOTDIR:-$HOME}/.zlogin"
__ua_finish
