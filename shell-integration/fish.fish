# unixagent shell integration for fish.
#
# unixagent starts fish with `--init-command 'source <this file>'`, which
# runs after the user's config.fish. fish 4 and later mark prompts
# themselves, without our id (and 4.0 without B); unixagent starts them
# with `--features no-mark-prompt` (4.0.6 and later know it), and the
# markers unixagent follows come from here in every version. Each 133
# marker ends with `;aid=$__ua_aid`, this session's id, which unixagent
# writes as this file's first line (a global, not exported, so a nested
# shell cannot print it).

if not status is-interactive
    exit
end

function __ua_url_path
    string escape --style=url -- $argv[1]
end

# Reported before each prompt, as bash and zsh do: unixagent takes a cwd
# only between commands (during one it would be a nested shell's).
function __ua_report_cwd
    printf '\e]7;file://%s%s\a' $hostname (__ua_url_path $PWD)
end

set -g __ua_ran 0

function __ua_preexec --on-event fish_preexec
    set -g __ua_ran 1
    printf '\e]133;C;aid=%s\a' $__ua_aid
end

function __ua_postexec --on-event fish_postexec
    set -l ret $status
    set -g __ua_ran 0
    printf '\e]133;D;%s;aid=%s\a' $ret $__ua_aid
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
    __ua_report_cwd
    printf '\e]133;A;aid=%s\a' $__ua_aid
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
    printf '\e]133;B;aid=%s\a' $__ua_aid
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
