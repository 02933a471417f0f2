# unixagent shell integration for fish.
#
# unixagent starts fish with `--init-command 'source <this file>'`, which
# runs after the user's config.fish. fish 4 and later emit OSC 133 markers
# themselves (all but B); then only B and the working directory report are
# added here.

if not status is-interactive
    exit
end

function __ua_url_path
    string escape --style=url -- $argv[1]
end

function __ua_report_cwd --on-variable PWD
    printf '\e]7;file://%s%s\a' (hostname) (__ua_url_path $PWD)
end

set -l __ua_major (string split -f1 . -- $FISH_VERSION)
if test "$__ua_major" -ge 4
    __ua_report_cwd
    # fish 4.0 marks A, C and D itself but not B, which is what tells
    # unixagent that the prompt is drawn and a fresh line is being read.
    functions -q fish_prompt; and functions -c fish_prompt __ua_user_prompt
    function fish_prompt
        if functions -q __ua_user_prompt
            __ua_user_prompt
        end
        printf '\e]133;B\a'
    end
    exit
end

set -g __ua_ran 0

function __ua_preexec --on-event fish_preexec
    set -g __ua_ran 1
    printf '\e]133;C\a'
end

function __ua_postexec --on-event fish_postexec
    set -l ret $status
    set -g __ua_ran 0
    printf '\e]133;D;%s\a' $ret
end

# Wrap the user's prompt: A before it, B after it. fish calls fish_prompt
# on every repaint too, so A and B repeat without a command in between;
# unixagent treats that as a redraw.
#
# fish draws the mode prompt (vi mode's [I]) before fish_prompt, so when
# there is one, A goes before it: after a turn unixagent shows the shell's
# output again from A on. An empty mode prompt (starship's) stays empty,
# or fish would repaint only it when the vi mode changes, and not the
# prompt that shows the mode.
function __ua_mode_prompt_wrapper
    set -l ret $status
    set -e __ua_prompt_started
    functions -q __ua_user_mode_prompt; or return
    __ua_set_status $ret
    # Its lines, without `string collect` (fish 3.1 and later only).
    set -l mode (__ua_user_mode_prompt)
    test -n "$mode"; or return
    __ua_prompt_start
    set -g __ua_prompt_started 1
    set -q mode[2]; and printf '%s\n' $mode[1..-2]
    printf '%s' $mode[-1]
end

function __ua_prompt_start
    printf '\e]133;A\a'
end

function __ua_prompt_wrapper
    set -l ret $status
    set -q __ua_prompt_started; or __ua_prompt_start
    set -e __ua_prompt_started
    if functions -q __ua_user_prompt
        # Restore $status for the user's prompt, which may show it.
        __ua_set_status $ret
        __ua_user_prompt
    end
    printf '\e]133;B\a'
end

# Makes $argv[1] call our wrapper $argv[2] around the user's function,
# kept as $argv[3].
function __ua_wrap
    functions -e $argv[3]
    functions -q $argv[1]; and functions -c $argv[1] $argv[3]
    functions -e $argv[1]
    functions -c $argv[2] $argv[1]
end

__ua_wrap fish_mode_prompt __ua_mode_prompt_wrapper __ua_user_mode_prompt
__ua_wrap fish_prompt __ua_prompt_wrapper __ua_user_prompt

# A prompt defined later (`fish_config prompt choose`, a theme's
# configure command, a plugin loaded on demand) replaces the wrapper: wrap
# it again before it is drawn.
function __ua_rewrap --on-event fish_prompt
    functions fish_mode_prompt | string match -q '*__ua_user_mode_prompt*'
    or __ua_wrap fish_mode_prompt __ua_mode_prompt_wrapper __ua_user_mode_prompt
    functions fish_prompt | string match -q '*__ua_user_prompt*'
    or __ua_wrap fish_prompt __ua_prompt_wrapper __ua_user_prompt
end

function __ua_set_status
    return $argv[1]
end

__ua_report_cwd
