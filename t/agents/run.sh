#!/bin/sh
# SPDX-License-Identifier: ISC
# make check-agents: the real agent clients, pinned (install.sh), each run
# under cbexec against a local stand-in of its vendor's API (mock/, Python
# standard library, 127.0.0.1 only, gone when this script ends), through
# the provider scenarios a user meets: an answer with a RALPH_STATUS block,
# COMPLETE, a bad key (401), a missing key, no permission (403), a rate
# limit with retry-after (429), an overload (529 or 503), a server error
# (500), no credit, a usage limit with a reset time, a refused connection,
# a stream cut mid-answer (cut); for Gemini its Code Assist quota with
# "reset after 2h52m39s" and an expired key;
# for Claude Code a usage limit that passes, then a trial run that needs
# no operator; and for Claude Code and Codex usage the mock reports going
# over --max-tokens (live from Claude's messages, at the end from Codex's
# turn), and the same tool call over and over; and for every client a
# productive session paging through a 2 000-line file, eight reads of
# different pages, which the loop guard must let go on.  Prints TAP.
#
# Each client runs with the settings of env/CLIENT.sh, which turn its own
# retries down where it allows (Qwen Code and opencode retry 429s and 5xx
# for a minute or two whatever is set, Copilot a 429 without retry-after
# for one, Continue's cn a 529 or a refused connection for almost two:
# those scenarios take that long).
#
# pi, GitHub Copilot CLI, Continue (cn) and Kilo run through the same
# scenarios, but cbexec has no adapter for them yet: each of their jobs
# checks what needs none -- the client, under cbexec, reached the mock and
# ended with its own exit status and words (as docs/CLIENT.md and the
# recordings in t/corpus/recorded/ say) -- and reports cbexec's verdict as
# skipped, saying why.
# The scenarios run side by side, $CHECK_AGENTS_JOBS at a time (6), the
# slow ones first; $CHECK_AGENTS_ONLY="claude:401 qwen:429 ..." runs some,
# and $CHECK_AGENTS_KEEP keeps the scratch directory (the clients' output
# and the state files).  $CBEXEC picks the binary; install.sh says where
# the clients are kept.
set -u
AG=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$AG/../.." && pwd)
CBEXEC=${CBEXEC:-$TOP/cbexec}
JOBS=${CHECK_AGENTS_JOBS:-6}
T0=$(date +%s)

if ! command -v python3 >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1
then
	echo "1..0 # SKIP python3 and node are needed"
	exit 0
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/cbexec-agents.XXXXXX") || exit 1
MOCKS=
cleanup() {
	# the mocks this script started, by their ids
	for p in $MOCKS; do kill "$p" 2>/dev/null; done
	if [ -n "${CHECK_AGENTS_KEEP:-}" ]; then
		echo "# kept $W" >&2
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sh "$AG/install.sh" >"$W/bins"
case $? in
0) ;;
77) echo "1..0 # SKIP the pinned clients are not installed and the npm registry cannot be reached"
    exit 0 ;;
*) echo "Bail out! installing the clients failed"
    exit 1 ;;
esac
bin() { sed -n "s/^$1 //p" "$W/bins"; }

export TZ=UTC	# Codex prints reset times in local time: one zone for all
PROMPT='Work on the next task of the plan, then end your reply with the RALPH_STATUS block.'

# mock NAME SCRIPT [ARGS...]: start one, its port in $W/NAME.port
mock() {
	n=$1 s=$2
	shift 2
	python3 "$AG/mock/$s" --port-file "$W/$n.port" --idle-exit 900 \
	    --log "$W/$n.log" "$@" >"$W/$n.out" 2>&1 &
	MOCKS="$MOCKS $!"
}
mock anthropic mock-anthropic.py
mock openai mock-openai.py
mock gemini mock-gemini.py
# A second Anthropic stand-in whose usage limit resets in a little while.
RESET=$(( $(date +%s) + 60 ))
mock reset mock-anthropic.py --reset-epoch "$RESET"
for n in anthropic openai gemini reset; do
	i=0
	while [ ! -s "$W/$n.port" ]; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			echo "Bail out! the $n mock did not start: $(cat "$W/$n.out")"
			exit 1
		fi
		sleep 0.1
	done
done
# A port nothing listens on.
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# url CLIENT SCENARIO [MOCK]: the base URL its env file expects.
url() {
	case $1 in
	claude|opencode|pi|cn|kilo) p=$(cat "$W/${3:-anthropic}.port") v= ;;
	codex|qwen|copilot) p=$(cat "$W/openai.port") v=/v1 ;;
	gemini) p=$(cat "$W/gemini.port") v= ;;
	esac
	[ "$2" = refused ] && p=$DEAD
	# pi's ChatGPT-plan provider: mock-openai's root (pi appends /codex/responses)
	[ "$1/${3:-}" = pi/openai ] && v=
	echo "http://127.0.0.1:$p/s/$2$v"
}

# The client's own command line, in its structured output format.
command_of() {
	case $1 in
	claude) echo "claude -p \"\$PROMPT\" --output-format stream-json --verbose" ;;
	codex) echo "codex exec --json --skip-git-repo-check \"\$PROMPT\"" ;;
	gemini) echo "gemini -p \"\$PROMPT\" --output-format stream-json" ;;
	qwen) echo "qwen -p \"\$PROMPT\" --approval-mode yolo --output-format stream-json" ;;
	opencode) echo "opencode run --format json \"\$PROMPT\"" ;;
	pi) echo "pi --no-session --mode json -p \"\$PROMPT\"" ;;
	copilot) echo "copilot -p \"\$PROMPT\" --allow-all-tools --output-format json" ;;
	cn) echo "cn --config \"\$CN_CONFIG\" -p \"\$PROMPT\" --format json" ;;
	kilo) echo "kilo run --format json \"\$PROMPT\"" ;;
	esac
}

# drive CLIENT SCENARIO CIRCUIT [CBEXEC OPTIONS...]: one invocation of
# cbexec running the client in a home and work tree of its own; $rc is
# cbexec's exit status, $D the job's directory.  $MOCK picks another mock
# than the client's own, $XENV adds NAME=VALUE words to its environment.
drive() {
	c=$1 s=$2 n=$3
	shift 3
	D=$W/jobs/$n
	mkdir -p "$D/home" "$D/work" "$D/tmp"
	[ -e "$D/work/README.md" ] || echo "# plan: 2.3 login form" >"$D/work/README.md"
	[ -e "$D/work/big.txt" ] || seq 2000 | sed 's/^/line /' >"$D/work/big.txt"
	# Claude Code's subscription limit needs an OAuth login.
	auth=
	[ "$c/$s" = claude/usage_limit ] && auth=oauth
	(cd "$D/work" && env -i PATH="$PATH" HOME="$D/home" TMPDIR="$D/tmp" \
	    TZ=UTC LANG=C.UTF-8 MOCK_URL="$(url "$c" "$s" "${MOCK:-}")" \
	    AGENT_BIN="$(bin "$c")/node_modules/.bin" CLAUDE_AUTH="$auth" PROMPT="$PROMPT" CMD="$CMD" \
	    CBEXEC_COPILOT_PKG_CACHE="$W/copilot-pkg" ${XENV:-} \
	    CBEXEC_STATE_DIR="$W/state" sh -c '
		. "$1"
		[ "$2" = missing_key ] &&
		    unset ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY \
			COPILOT_PROVIDER_API_KEY
		shift 2
		eval "exec \"\$@\" $CMD"' sh "$AG/env/$c.sh" "$s" "$CBEXEC" \
	    --name "$n" --no-prompt -t 300 "$@" -- \
	    </dev/null >>"$D/out" 2>>"$D/err")
	rc=$?
}

st() { perl -MJSON::PP -0777 -e '
	my $v = eval { decode_json(<STDIN>) } // {};
	for my $k (split /\./, $ARGV[0]) { $v = ref $v eq "HASH" ? $v->{$k} : undef }
	print defined $v ? (JSON::PP::is_bool($v) ? ($v ? "true" : "false") : $v) : "null";
	' "$2" <"$W/state/$1.json" 2>/dev/null; }

# Each job prints its TAP lines, without numbers, into $W/res/JOB.
say() {	# say OK DESC [DIAG...]
	r=$1 d=$2
	shift 2
	if [ "$r" -eq 0 ]; then echo "ok - $d"; else
		echo "not ok - $d"
		for x in "$@"; do echo "#   $x"; done
		sed 's/^/#   stderr: /' "$D/err" | tail -n 12
	fi
}

job() {	# job CLIENT SCENARIO
	c=$1 s=$2 n=$1-$2
	CMD=$(command_of "$c")
	t=$(date +%s) label="$c $s"
	# pi words a usage limit with a reset time only for the ChatGPT plan
	[ "$c/$s" = pi/usage_limit ] && MOCK=openai XENV=CBEXEC_PI_PROVIDER=openai-codex
	# cn shows no reset time (nor headers): a usage limit is a 429 to it
	scen=$s
	[ "$c/$s" = cn/usage_limit ] && s=429 n=$c-usage_limit
	case $s in
	success)
		drive "$c" success "$n" --progress status
		[ $rc -eq 0 ] && [ "$(st "$n" state)" = CLOSED ] &&
		    [ "$(st "$n" last_progress_iteration)" = 1 ]
		say $? "$c: an answer with a RALPH_STATUS block: exit 0, its status read as progress" \
		    "exit $rc, state $(st "$n" state), last progress $(st "$n" last_progress_iteration)" ;;
	complete)
		drive "$c" complete "$n" --loop -n 3 --progress exit
		[ $rc -eq 0 ] && [ "$(st "$n" iteration)" = 1 ]
		say $? "$c: STATUS: COMPLETE ends the loop after one run" \
		    "exit $rc, runs $(st "$n" iteration)" ;;
	401|403|missing_key|credit|key_expired)
		want=auth
		[ "$s" = credit ] && want=billing
		drive "$c" "$s" "$n" --progress exit
		[ $rc -eq 122 ] && [ "$(st "$n" open_reason)" = "fatal: $want" ] &&
		    [ "$(st "$n" iteration)" = 1 ]
		say $? "$c: $s: 122 after one run, fatal $want" \
		    "exit $rc, reason $(st "$n" open_reason): $(st "$n" last_error.message)" ;;
	429|529|503|500|refused|cut)
		case $s in
		429) want=rate_limited ;;
		529|503) want=overloaded ;;
		500) want='server_error|overloaded' ;;
		refused|cut) want=network ;;
		esac
		drive "$c" "$scen" "$n" --progress exit
		ty=$(st "$n" last_error.type)
		# the exit status is the client's own, or 1 where it exited 0
		# or with a status of its own above 128 (Qwen's 0, Gemini's
		# HTTP status & 0xFF): cbexec did not intervene
		[ $rc -lt 120 -o $rc -gt 122 ] &&
		    [ "$(st "$n" state)" = CLOSED ] &&
		    [ "$(st "$n" consecutive_errors)" = 1 ] &&
		    [ "$(st "$n" last_error.class)" = transient ] &&
		    [ "$(st "$n" same_error_count)" = 0 ] &&
		    echo "$ty" | grep -Eqx "$want"
		say $? "$c: $s: transient $ty, the client's own exit $rc, not the same error" \
		    "exit $rc, state $(st "$n" state), $(st "$n" last_error.class) $ty: $(st "$n" last_error.message)" ;;
	usage_limit|quota_daily|capacity)
		drive "$c" "$s" "$n" --progress exit
		[ $rc -eq 120 ] && [ "$(st "$n" state)" = OPEN ] &&
		    [ "$(st "$n" last_error.type)" = usage_limit ] &&
		    [ "$(st "$n" retry_at)" != null ] &&
		    st "$n" open_reason | grep -Eq '^usage limit until [0-9]{2}:[0-9]{2} UTC'
		say $? "$c: usage limit: 120, OPEN until $(st "$n" retry_at) ($(st "$n" open_reason))" \
		    "exit $rc, state $(st "$n" state), $(st "$n" last_error.type): $(st "$n" last_error.message)" ;;
	spend)
		# The mock's tools_loop turns report their usage: past
		# --max-tokens the run is stopped (Claude Code: at its third
		# message; Codex, which reports usage only as its turn ends:
		# then).  Its loop of calls must not stop it first.
		cap=15000
		[ "$c" = codex ] && cap=5000	# its one turn: 8960
		drive "$c" tools_loop "$n" --progress exit --max-tokens $cap \
		    --max-repeat-calls 0 -k 2
		[ $rc -eq 124 ] && [ "$(st "$n" last_error.class)" = budget ] &&
		    [ "$(st "$n" last_error.type)" = max_tokens ] &&
		    [ "$(st "$n" outcome)" = BUDGET ] &&
		    [ "$(st "$n" spend.input_tokens)" != null ]
		say $? "$c: usage over --max-tokens: 124, budget max_tokens ($(st "$n" last_error.message))" \
		    "exit $rc, $(st "$n" last_error.class) $(st "$n" last_error.type): $(st "$n" last_error.message)" ;;
	loop)
		if [ "$c" = cn ]; then
			# cn prints no tool calls: nothing to watch, no stop
			drive "$c" tools_loop "$n" --progress exit --max-repeat-calls 3 -k 2
			[ $rc -eq 0 ] && [ "$(st "$n" last_error.type)" = "" ]
			say $? "cn: a loop of tool calls: not a false stop (exit $rc)"
			echo "ok - cn: the same tool call 3 times # SKIP cn shows no tool calls to watch"
			echo "# $label: $(( $(date +%s) - t ))s" >&2
			return
		fi
		drive "$c" tools_loop "$n" --progress exit --max-repeat-calls 3 -k 2
		[ $rc -eq 124 ] && [ "$(st "$n" last_error.type)" = loop ]
		say $? "$c: the same tool call 3 times: 124, recoverable loop" \
		    "exit $rc, $(st "$n" last_error.class) $(st "$n" last_error.type): $(st "$n" last_error.message)" ;;
	paging)
		# Eight reads of one file, each a different page: a
		# productive session the loop guard lets go on.
		drive "$c" tools_page "$n" --progress exit
		[ $rc -eq 0 ] && [ "$(st "$n" state)" = CLOSED ] &&
		    [ "$(st "$n" last_error.type)" = "" ]
		say $? "$c: paging through a file, eight calls: exit 0, not a loop" \
		    "exit $rc, $(st "$n" last_error.class) $(st "$n" last_error.type): $(st "$n" last_error.message)" ;;
	trial)
		# A usage limit that resets at $RESET, then a trial that
		# nobody had to allow.
		MOCK=reset drive claude usage_limit "$n" --progress exit
		r1=$rc at=$(st "$n" retry_at)
		drive claude success "$n" --progress exit
		r2=$rc
		while [ "$(date +%s)" -le "$RESET" ]; do sleep 1; done
		drive claude success "$n" --progress exit
		[ $r1 -eq 120 ] && [ $r2 -eq 120 ] && [ $rc -eq 0 ] &&
		    [ "$(st "$n" state)" = CLOSED ] &&
		    grep -q 'OPEN -> HALF_OPEN: Retry time reached' "$D/err"
		say $? "claude: usage limit until $at: refused before it, a trial after it without an operator" \
		    "exits $r1 $r2 $rc, state $(st "$n" state)" ;;
	esac
	echo "# $label: $(( $(date +%s) - t ))s" >&2
}

mkdir -p "$W/res" "$W/state"
# Copilot's native binary unpacks its 190 MB package on first start: once,
# before its runs share it.
if [ -n "$(bin copilot)" ] && ! HOME="$W/copilot-home" COPILOT_PKG_CACHE_HOME="$W/copilot-pkg" \
    "$(bin copilot)/node_modules/.bin/copilot" --version </dev/null >/dev/null 2>&1
then
	echo "Bail out! copilot --version failed"
	exit 1
fi
mkfifo "$W/sem" || exit 1
exec 3<>"$W/sem"
i=0
while [ $i -lt "$JOBS" ]; do echo >&3; i=$((i + 1)); done
k=0 PIDS=
# Slowest first: Qwen, opencode, cn and Copilot retry by themselves.
for cs in claude:trial cn:cut opencode:cut qwen:cut \
    qwen:429 qwen:529 qwen:500 qwen:usage_limit \
    cn:refused cn:529 copilot:credit copilot:usage_limit \
    opencode:529 opencode:500 opencode:usage_limit opencode:refused \
    opencode:429 qwen:refused copilot:refused copilot:503 copilot:500 \
    claude:success claude:complete claude:401 claude:missing_key \
    claude:403 claude:429 claude:529 claude:500 claude:credit \
    claude:usage_limit claude:refused \
    codex:success codex:complete codex:401 codex:missing_key codex:403 \
    codex:429 codex:503 codex:500 codex:credit codex:usage_limit \
    codex:refused \
    gemini:success gemini:complete gemini:401 gemini:missing_key \
    gemini:403 gemini:429 gemini:503 gemini:500 gemini:credit \
    gemini:usage_limit gemini:refused \
    qwen:success qwen:complete qwen:401 qwen:missing_key qwen:403 \
    qwen:credit \
    opencode:success opencode:complete opencode:401 \
    opencode:missing_key opencode:403 opencode:credit \
    claude:spend claude:loop codex:spend codex:loop \
    pi:success pi:complete pi:401 pi:missing_key pi:403 pi:429 pi:529 \
    pi:500 pi:credit pi:usage_limit pi:refused pi:loop pi:spend \
    copilot:success copilot:complete copilot:401 copilot:missing_key \
    copilot:403 copilot:429 copilot:loop \
    cn:success cn:complete cn:401 cn:missing_key cn:403 cn:429 cn:500 \
    cn:credit cn:usage_limit cn:loop \
    kilo:success kilo:complete kilo:401 kilo:missing_key kilo:403 \
    kilo:429 kilo:529 kilo:500 kilo:credit kilo:usage_limit kilo:refused \
    kilo:loop kilo:spend \
    claude:paging codex:paging gemini:paging qwen:paging opencode:paging \
    pi:paging copilot:paging cn:paging kilo:paging \
    copilot:cut kilo:cut claude:cut codex:cut gemini:cut pi:cut \
    gemini:capacity gemini:key_expired; do
	case " ${CHECK_AGENTS_ONLY:-$cs} " in *" $cs "*) ;; *) continue ;; esac
	c=${cs%%:*} s=${cs#*:}
	# Gemini's usage limit is its daily quota (no reset time given).
	[ "$cs" = gemini:usage_limit ] && s=quota_daily
	k=$((k + 1))
	read -r _ <&3
	( job "$c" "$s" >"$W/res/$(printf %03d $k)" 2>>"$W/times"; echo >&3 ) &
	PIDS="$PIDS $!"
done
# the jobs, not the mocks, which outlive them
wait $PIDS
exec 3>&-

cat "$W"/res/* | awk '
	/^(not )?ok - / { n++; sub(/ok -/, "ok " n " -") }
	{ print }
	END { print "1..." n > "/dev/stderr" }' 2>"$W/plan"
sort -t: -k2 -n "$W/times" | tail -n 5 | sed 's/^#/# slowest:/'
# the time each client's jobs took, added up (they ran $JOBS at a time)
awk '{ sub(/s$/, "", $NF); t[$2] += $NF } END {
	for (c in t) printf "# %s: %ds in all\n", c, t[c] }' "$W/times" | sort
echo "# check-agents: $(( $(date +%s) - T0 ))s, $JOBS at a time"
sed 's/^1\.\.\./1../' "$W/plan"
! grep -q '^not ok' "$W"/res/*
