# unixagent shell integration for fish.
#
# unixagent starts fish with `--init-command 'source <this file>'`, which
# runs after the user's config.fish. fish 4 and later mark prompts
# themselves, without our id; unixagent starts them with
# `--features no-mark-prompt` (4.0.6 and later know it), and the markers
# unixagent follows come from here in every version. Each 133 marker ends with `;aid=$__ua_aid`, this session's id,
# which unixagent writes as this file's first line (a global, not exported,
# so a nested shell cannot print it).

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
functions -q fish_prompt; and functions -c fish_prompt __ua_user_prompt
function fish_prompt
    set -l ret $status
    __ua_report_cwd
    printf '\e]133;A;aid=%s\a' $__ua_aid
    if functions -q __ua_user_prompt
        # Restore $status for the user's prompt, which may show it.
        __ua_set_status $ret
        __ua_user_prompt
    end
    printf '\e]133;B;aid=%s\a' $__ua_aid
end

function __ua_set_status
    return $argv[1]
end

__ua_report_cwd
