#!/bin/sh
# SPDX-License-Identifier: ISC
# The shell completions as a user types: bash completes abbreviated
# options as getopt_long takes them, SIG-prefixed signal names, each
# progress source once, the config file's phases, -s as the signal and the
# operator options and --help's categories, and works under `set -u`;
# zsh completes the command after an explicit -- and phases typed in
# lower case.  A relative XDG_STATE_HOME is ignored by both, as by cbexec.
. "$(dirname "$0")/lib.sh"
C="$TOP/contrib"

# comp WORD...: the bash completion for "cbexec WORD...", the cursor on
# the last word; COMPREPLY sorted, on one line.
comp() { bash_comp "$C/cbexec.bash" "$@" | tr '\n' ' ' | sed 's/ $//'; }

# Abbreviated options, as getopt_long takes them.
is "$(comp --pha G)" GREEN "bash: --pha G (an abbreviation) -> GREEN"
is "$(comp --sig KI)" KILL "bash: --sig KI -> KILL"
is "$(comp --sig=K)" "--sig=KILL" "bash: --sig=K -> --sig=KILL"
mkdir -p "$CBEXEC_STATE_DIR" d1
: > "$CBEXEC_STATE_DIR/nightly.json"
is "$(comp --statu ni)" nightly "bash: --statu (--status) CIRCUIT"
is "$(comp --reset-c --reas why ni)" nightly "bash: --reset-c --reas TEXT CIRCUIT"
is "$(comp --chd d)" d1 "bash: --chd completes directories"
# Signals with or without SIG, and -s is the signal.
is "$(comp --signal SIGK)" SIGKILL "bash: --signal SIGK -> SIGKILL"
is "$(comp --signal sigte)" SIGTERM "bash: --signal sigte -> SIGTERM"
is "$(comp -s HU)" HUP "bash: -s HU -> HUP (-s is --signal)"
is "$(comp --signal SIG0)" "" "bash: no SIG0"
: > state-file.json
is "$(comp -s state)" "" "bash: -s offers no state files"
is "$(comp --state state-f)" state-file.json "bash: --state still completes files"
# Each progress source once.
is "$(comp --progress git,)" "git,auto git,cmd git,exit git,files git,status" \
	"bash: --progress git, -> every source but git"
is "$(comp --progress git,files,e)" "git,files,exit" "bash: --progress git,files,e -> exit"
is "$(comp --progress git,files,status,cmd,exit,a)" "git,files,status,cmd,exit,auto" \
	"bash: the last source left"
is "$(comp --progress status,s)" "" "bash: --progress status,s: status is taken"
# The config file's phases, in any case.
mkdir -p .cbexec
echo '{"phases":{"LINT":{"no_progress":4},"perf":{}}}' > .cbexec/config.json
echo '{"phases":{"SECURITY":{}}}' > other.json
is "$(comp --phase "")" "DOCUMENT GREEN LINT RED REFACTOR perf" \
	"bash: --phase: the built-in phases and .cbexec/config.json's"
is "$(comp --phase li)" LINT "bash: --phase li -> LINT"
is "$(comp --phase P)" perf "bash: --phase P -> perf"
is "$(comp -c other.json -p s)" SECURITY "bash: -c FILE: that file's phases"
is "$(comp --config=other.json --phase s)" SECURITY "bash: --config=FILE too"
mkdir -p proj/.cbexec
echo '{"phases":{"BENCH":{}}}' > proj/.cbexec/config.json
is "$(comp -C proj --phase b)" BENCH "bash: -C DIR: DIR's .cbexec/config.json"
# The operator options.
is "$(comp --cre)" --create "bash: --create"
is "$(comp --status --al)" "--all --allow-config" "bash: --al: --all and --allow-config"
# After --help, its categories.
is "$(comp --help "")" "agents all circuit operator record running store thresholds" \
	"bash: --help offers all and the categories"
is "$(comp --help th)" thresholds "bash: --help th -> thresholds"
is "$(comp -h s)" store "bash: -h s -> store"
is "$(comp --help=ag)" "--help=agents" "bash: --help=ag -> --help=agents"
is "$(comp --he op)" operator "bash: --he (an abbreviation) op -> operator"
# Under `set -u` (a user's ~/.bashrc may have it), with the XDG variables
# and CBEXEC_STATE_DIR unset: no "unbound variable", the same answers.
strict() {
	(unset XDG_STATE_HOME XDG_CONFIG_HOME CBEXEC_STATE_DIR; comp "$@")
}
for words in "--name ni" "--status ni" "--phase G" "-c other.json -p S" \
    "--config=x --phase G" "-C proj --phase b" "--account a" "--reset-account a" \
    "--help th" "-- ech" "--loop sh --res" "-t"; do
	out=$(strict $words)
	ok "$(printf '%s\n' "$out" | grep -q 'unbound variable\|bad substitution'; [ $? -ne 0 ]; echo $?)" \
		"bash under set -u: cbexec $words"
done
is "$(strict --phase G)" GREEN "bash under set -u: --phase G -> GREEN"
is "$(strict --help th)" thresholds "bash under set -u: --help th -> thresholds"

# A relative XDG_STATE_HOME is ignored.
mkdir -p home/.local/state/cbexec rel/cbexec
: > home/.local/state/cbexec/fromhome.json
: > rel/cbexec/fromrel.json
out=$(unset CBEXEC_STATE_DIR; XDG_STATE_HOME=rel HOME=$SCRATCH/home; export XDG_STATE_HOME HOME; comp --name from)
is "$out" fromhome "bash: a relative XDG_STATE_HOME is ignored"

# zsh, through a pseudo-terminal.
if command -v zsh >/dev/null 2>&1 && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
	z() { timeout 90 zsh "$T_DIR/zsh-complete" "$C" "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }
	is "$(z cbexec --phase gr)" GREEN "zsh: --phase gr -> GREEN (lower case)"
	is "$(z cbexec -p re)" "RED REFACTOR" "zsh: -p re -> RED REFACTOR"
	is "$(z cbexec -- ls --colo)" --color "zsh: after --, the command's own options"
	like "$(z cbexec -- ech)" '(^| )echo( |$)' "zsh: after --, command names"
	is "$(z cbexec -t 5 -- ls --colo)" --color "zsh: options, then --, then the command"
	is "$(z cbexec -s KI)" KILL "zsh: -s is the signal"
	like "$(z cbexec --cre)" '--create' "zsh: --create"
	is "$(z cbexec --help th)" thresholds "zsh: --help th -> thresholds"
	out=$(unset CBEXEC_STATE_DIR; XDG_STATE_HOME=rel HOME=$SCRATCH/home; export XDG_STATE_HOME HOME; z cbexec --name from)
	is "$out" fromhome "zsh: a relative XDG_STATE_HOME is ignored"
else
	for i in 1 2 3 4 5 6 7 8 9; do skip "no zsh with zsh/zpty"; done
fi
done_testing
