#!/bin/sh
# SPDX-License-Identifier: ISC
# contrib/ and the man page: bash completion through its completion
# function, zsh completion syntax, the dashboard JSON, the loop script, and
# a clean mandoc -Tlint.  Every option of --help is in the man page and in
# both completions.
. "$(dirname "$0")/lib.sh"
C="$TOP/contrib"
MAN="$TOP/man/cbexec.1"

skip() {	# skip REASON
	_n=$((_n + 1))
	echo "ok $_n # skip $1"
}

# comp WORD...: run the bash completion for "cbexec WORD...", the cursor on
# the last word; prints COMPREPLY one per line, sorted.
comp() { bash_comp "$C/cbexec.bash" "$@"; }
has() {	# has WORD LIST: WORD is a line of LIST
	printf '%s\n' "$2" | grep -Fxq -- "$1"
}

ok "$(bash -n "$C/cbexec.bash"; echo $?)" "cbexec.bash: bash -n"
out=$(comp --res); ok "$(has --reset-circuit "$out"; echo $?)" "bash: --res -> --reset-circuit"
ok "$(has --loop "$(comp --lo)"; echo $?)" "bash: --lo -> --loop"
is "$(comp --phase G)" GREEN "bash: --phase G -> GREEN"
is "$(comp --phase g)" GREEN "bash: --phase g -> GREEN (case-insensitive)"
is "$(comp -p RE | tr '\n' ' ')" "RED REFACTOR " "bash: -p RE -> RED REFACTOR"
is "$(comp --phase=D)" "--phase=DOCUMENT" "bash: --phase=D -> --phase=DOCUMENT"
is "$(comp --phase = G)" GREEN "bash: --phase = G (split at '=') -> GREEN"
is "$(comp --signal KI)" KILL "bash: --signal KI -> KILL"
is "$(comp --progress git,fi)" "git,files" "bash: --progress git,fi -> git,files"

mkdir -p "$CBEXEC_STATE_DIR"
: > "$CBEXEC_STATE_DIR/nightly.json"
: > "$CBEXEC_STATE_DIR/nightly.json.lock"
: > "$CBEXEC_STATE_DIR/nimbus.json"
: > "$CBEXEC_STATE_DIR/other.json"
is "$(comp --name ni | tr '\n' ' ')" "nightly nimbus " "bash: --name ni -> circuits from CBEXEC_STATE_DIR"
is "$(comp -N o)" other "bash: -N o -> other"
is "$(comp --status ni | tr '\n' ' ')" "nightly nimbus " "bash: --status CIRCUIT"
is "$(comp --reset-circuit --reason fixed nig)" nightly "bash: --reset-circuit --reason TEXT CIRCUIT"
is "$(comp --history --json --last 5 oth)" other "bash: --history ... CIRCUIT"
is "$(comp --trip nim)" nimbus "bash: --trip CIRCUIT"
mkdir -p xdg/cbexec
: > xdg/cbexec/fromxdg.json
out=$(unset CBEXEC_STATE_DIR; XDG_STATE_HOME=$SCRATCH/xdg; export XDG_STATE_HOME; comp --name from)
is "$out" fromxdg "bash: without CBEXEC_STATE_DIR: \$XDG_STATE_HOME/cbexec"

mkdir -p dir1; : > file1.json
is "$(comp --state file)" file1.json "bash: --state completes files"
is "$(comp -C dir)" dir1 "bash: -C completes directories"
is "$(comp --watch d)" dir1 "bash: --watch completes directories"
is "$(comp --timeout 1)" "" "bash: --timeout wants a duration: nothing offered"
# After COMMAND (or --) the words are COMMAND's own.
out=$(comp --loop sh --res); ok "$(has --reset-circuit "$out"; [ $? -ne 0 ]; echo $?)" "bash: after COMMAND, no cbexec options"
out=$(comp -- sh --res); ok "$(has --reset-circuit "$out"; [ $? -ne 0 ]; echo $?)" "bash: after --, no cbexec options"
is "$(comp -t 5 -- ./dir)" ./dir1 "bash: COMMAND's arguments complete as files"
ok "$(has echo "$(comp --loop ech)"; echo $?)" "bash: the first non-option word is a command name"

# Every long option of --help all is completed, documented and in zsh's
# list, and every option the completion knows is in --help all.
if [ -x "$CBEXEC" ]; then
	opts=$("$CBEXEC" --help all | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	all=$(comp --)
	missing=; missing_man=; missing_zsh=
	for o in $opts; do
		has "$o" "$all" || missing="$missing $o"
		grep -qF -- "Fl \\${o#-}" "$MAN" || missing_man="$missing_man $o"
		grep -qF -- "$o" "$C/_cbexec" || missing_zsh="$missing_zsh $o"
	done
	is "$missing" "" "bash: completes every option of --help all"
	is "$missing_man" "" "man page: documents every option of --help all"
	is "$missing_zsh" "" "zsh: lists every option of --help all"
	unhelped=
	for o in $all; do
		has "$o" "$opts" || unhelped="$unhelped $o"
	done
	is "$unhelped" "" "--help all: every option the completion offers"
else
	for i in 1 2 3 4; do skip "no cbexec binary"; done
fi

if command -v zsh >/dev/null 2>&1; then
	out=$(zsh -n "$C/_cbexec" 2>&1); is "$?:$out" "0:" "_cbexec: zsh -n"
else
	skip "no zsh"
fi
like "$(head -1 "$C/_cbexec")" '^#compdef cbexec$' "_cbexec: #compdef cbexec"

out=$(perl -MJSON::PP -0777 -e '
	my $d = decode_json(<STDIN>);
	my @e = map { $_->{expr} } map { @{$_->{targets} || []} } @{$d->{panels}};
	print join("\n", @e), "\n";
' < "$C/grafana-dashboard.json" 2>&1); rc=$?
is "$rc" 0 "grafana-dashboard.json parses as JSON"
for m in cbexec_state cbexec_runs_total cbexec_errors_total cbexec_opens_total; do
	like "$out" "$m" "grafana: a panel queries $m"
done
like "$(printf '%s\n' "$out" | grep cbexec_errors_total)" 'by \(class\)' "grafana: errors by class"

ok "$(grep -q 'alert: CbexecCircuitOpen' "$C/prometheus-alerts.yml" &&
	grep -q 'expr: cbexec_state == 2' "$C/prometheus-alerts.yml"; echo $?)" \
	"prometheus: CbexecCircuitOpen on cbexec_state == 2"
ok "$(grep -q 'alert: CbexecNoProgress' "$C/prometheus-alerts.yml"; echo $?)" "prometheus: CbexecNoProgress"

ok "$(sh -n "$C/agent-loop.sh"; echo $?)" "agent-loop.sh: sh -n"
ok "$(test -x "$C/agent-loop.sh"; echo $?)" "agent-loop.sh is executable"
if [ -x "$CBEXEC" ]; then
	# Its decisions: a step that went well -> the next one; the step
	# whose status block says the work is done -> done (0); an OPEN
	# circuit -> stop with 120.  An agent exits 0 after every step.
	cat >step.sh <<'SH'
#!/bin/sh
n=$(cat n 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >n
[ "$n" -ge 3 ] && s=COMPLETE || s=IN_PROGRESS
printf -- '---CBEXEC_STATUS---\nSTATUS: %s\n---END_CBEXEC_STATUS---\n' "$s"
SH
	CBEXEC=$CBEXEC CBEXEC_OPTS="--no-prompt --progress exit" \
	    "$C/agent-loop.sh" -n loop1 -m 10 -- sh ./step.sh >/dev/null 2>err
	is "$?:$(cat n)" "0:3" "agent-loop.sh: steps that exit 0 go on; the one that reports completion ends it with 0"
	like "$(cat err)" 'done after 3 runs' "agent-loop.sh: says it is done"
	CBEXEC=$CBEXEC CBEXEC_OPTS="--no-prompt --progress exit" \
	    "$C/agent-loop.sh" -n loop1b -m 2 -- true 2>/dev/null
	is "$?" 0 "agent-loop.sh: successes that never complete stop at -m, with the last status"
	CBEXEC=$CBEXEC RETRY_PAUSE=0 "$C/agent-loop.sh" -n loop2 -m 10 -- false 2>err
	is "$?" 120 "agent-loop.sh: retries a failing step until the circuit opens"
	like "$(cat err)" 'circuit OPEN' "agent-loop.sh: says the circuit is OPEN"
else
	skip "no cbexec binary"; skip "no cbexec binary"; skip "no cbexec binary"
	skip "no cbexec binary"; skip "no cbexec binary"
fi

if command -v mandoc >/dev/null 2>&1; then
	out=$(mandoc -Tlint -W warning "$MAN" 2>&1); rc=$?
	is "$rc:$out" "0:" "man/cbexec.1: mandoc -Tlint -W warning is clean"
else
	skip "no mandoc"
fi
for s in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	ok "$(grep -qx "\\.Sh $s" "$MAN"; echo $?)" "man page has $s"
done
for code in 120 121 122 123 124 125 126 127; do
	ok "$(grep -qx "\\.It $code" "$MAN"; echo $?)" "man page EXIT STATUS lists $code"
done
done_testing
