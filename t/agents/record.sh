#!/bin/sh
# SPDX-License-Identifier: ISC
# Record what a real agent client prints against the local mocks, into the
# judgement corpus (t/corpus/recorded/CLIENT-VERSION/SCENARIO-FORMAT.*,
# format: t/corpus/README.md):
#
#   sh t/agents/record.sh CLIENT [SCENARIO...]
#
# CLIENT is claude, codex, gemini, qwen, opencode, pi, copilot, cn or
# kilo; or grok or cline, which cbexec reads through a description in a
# config (docs/grok.md, docs/cline.md).  A SCENARIO is a mock scenario (mock/*.py: success, complete, 401,
# 403, 429, 500, 503, 529, credit, usage_limit, tools, tools_loop, cut (a
# stream cut mid-way), ...;
# refused: a port nothing listens on; missing_key: no key at all), with
# an optional suffix that changes the client's settings:
#   _defaults   the client's own retry settings (env/CLIENT.sh turns them
#               down by default)
#   _codex      pi: the ChatGPT-plan provider (openai-codex) on mock-openai
#   _anthropic  copilot: the "anthropic" provider type on mock-anthropic
#   _auto       kilo: `kilo run --auto` (grants what it would ask for)
#   _noallow    copilot: without --allow-all-tools (every tool it would
#               run asks, and nobody can answer)
#   _turns1     claude: --max-turns 1 (its own turn cap)
# Default: every scenario of check-agents for that client.  Each runs once
# per output format of the client, in a fresh $HOME, with stdin from
# /dev/null, under `timeout $REC_TIMEOUT` (300 s), as its own session:
# processes still in it when the client has exited are counted in the
# .cmd ("lingering") and ended.  The working directory holds README.md
# and big.txt (2 000 lines, paged through in tools_page).
#
# $REC_OUT is the corpus directory (default t/corpus/recorded), $REC_ROOT
# the scratch directory (default /tmp/cbexec-rec-CLIENT, emptied first);
# the mocks listen on 127.0.0.1 only and end with this script.  The
# .expect labels are not written here: they are the operator's judgement.
set -u
AG=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$AG/../.." && pwd)
CLIENT=${1:?usage: record.sh CLIENT [SCENARIO...]}
shift
case $CLIENT in
claude|gemini|qwen) FORMATS='text json stream-json' ;;
codex|opencode) FORMATS='plain json' ;;
pi) FORMATS='text json' ;;
copilot) FORMATS='text json' ;;
cn) FORMATS='text json' ;;
kilo) FORMATS='plain json' ;;
grok) FORMATS='json' ;;
cline) FORMATS='text json' ;;
*) echo "record.sh: unknown client '$CLIENT' (claude, codex, gemini, qwen, opencode, pi, copilot, cn, kilo; grok, cline)" >&2
   exit 2 ;;
esac
SCENARIOS=${*:-success complete 401 403 429 529 503 500 credit usage_limit \
    refused missing_key tools tools_loop cut}
PROMPT='Work on the next task of the plan.'
REC_TIMEOUT=${REC_TIMEOUT:-300}
ROOT=${REC_ROOT:-/tmp/cbexec-rec-$CLIENT}
OUT=${REC_OUT:-$TOP/t/corpus/recorded}

BIN=$(sh "$AG/install.sh" "$CLIENT" | sed -n "s/^$CLIENT //p")
[ -n "$BIN" ] || { echo "record.sh: $CLIENT is not installed" >&2; exit 1; }
BIN=$BIN/node_modules/.bin
rm -rf "$ROOT"
mkdir -p "$ROOT/mock" "$ROOT/vhome" || exit 1
VERSION=$(cd "$ROOT/vhome" && HOME=$ROOT/vhome "$BIN/$CLIENT" --version </dev/null 2>&1 |
    grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
[ -n "$VERSION" ] || { echo "record.sh: $CLIENT --version said nothing" >&2; exit 1; }
DIR=$OUT/$CLIENT-$VERSION
mkdir -p "$DIR" || exit 1
MOCKS=
cleanup() { for p in $MOCKS; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM
for m in anthropic openai gemini; do
	python3 "$AG/mock/mock-$m.py" --port-file "$ROOT/mock/$m.port" \
	    --idle-exit 1800 --log "$ROOT/mock/$m.log" >"$ROOT/mock/$m.out" 2>&1 &
	MOCKS="$MOCKS $!"
done
for m in anthropic openai gemini; do
	i=0
	while [ ! -s "$ROOT/mock/$m.port" ]; do
		i=$((i + 1))
		[ $i -gt 300 ] && { echo "record.sh: the $m mock did not start" >&2; exit 1; }
		sleep 0.1
	done
done
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# The command line of CLIENT in FORMAT, as a shell word list.
command_of() {
	case $CLIENT/$1 in
	claude/text) echo "claude -p '$PROMPT'" ;;
	claude/json) echo "claude -p '$PROMPT' --output-format json" ;;
	claude/stream-json) echo "claude -p '$PROMPT' --output-format stream-json --verbose" ;;
	codex/plain) echo "codex exec --skip-git-repo-check '$PROMPT'" ;;
	codex/json) echo "codex exec --json --skip-git-repo-check '$PROMPT'" ;;
	gemini/text) echo "gemini -p '$PROMPT'" ;;
	gemini/*) echo "gemini -p '$PROMPT' --output-format $1" ;;
	qwen/text) echo "qwen -p '$PROMPT' --approval-mode yolo" ;;
	qwen/*) echo "qwen -p '$PROMPT' --approval-mode yolo --output-format $1" ;;
	opencode/plain) echo "opencode run '$PROMPT'" ;;
	opencode/json) echo "opencode run --format json '$PROMPT'" ;;
	pi/text) echo "pi --no-session -p '$PROMPT'" ;;
	pi/json) echo "pi --no-session --mode json -p '$PROMPT'" ;;
	copilot/text) echo "copilot -p '$PROMPT' --allow-all-tools" ;;
	copilot/json) echo "copilot -p '$PROMPT' --allow-all-tools --output-format json" ;;
	cn/text) echo "cn --config \"\$CN_CONFIG\" -p '$PROMPT'" ;;
	cn/json) echo "cn --config \"\$CN_CONFIG\" -p '$PROMPT' --format json" ;;
	kilo/plain) echo "kilo run '$PROMPT'" ;;
	kilo/json) echo "kilo run --format json '$PROMPT'" ;;
	grok/json) echo "grok -p '$PROMPT'" ;;
	cline/text) echo "cline -P anthropic '$PROMPT'" ;;
	cline/json) echo "cline --json -P anthropic '$PROMPT'" ;;
	esac
}

# record SCENARIO FORMAT
record() {
	sc=$1 fmt=$2 base=$1 extra= mock=anthropic
	case $sc in
	*_defaults) base=${sc%_defaults}
		extra="CBEXEC_$(echo "$CLIENT" | tr a-z A-Z)_RETRY=defaults" ;;
	*_codex) base=${sc%_codex} extra=CBEXEC_PI_PROVIDER=openai-codex mock=openai ;;
	*_anthropic) base=${sc%_anthropic} extra=CBEXEC_COPILOT_PROVIDER=anthropic ;;
	*_auto) base=${sc%_auto} ;;
	*_noallow) base=${sc%_noallow} ;;
	*_turns1) base=${sc%_turns1} ;;
	esac
	case $CLIENT in
	codex|qwen|grok) mock=openai ;;
	gemini) mock=gemini ;;
	copilot) [ -z "$extra" ] && mock=openai ;;
	esac
	port=$(cat "$ROOT/mock/$mock.port")
	[ "$base" = refused ] && port=$DEAD
	url=http://127.0.0.1:$port/s/$base
	case $CLIENT/$mock in
	copilot/openai|codex/openai|qwen/openai|grok/openai) url=$url/v1 ;;
	esac
	# Claude Code's subscription limit needs an OAuth login.
	case $CLIENT/$base in
	claude/usage_limit|claude/tools_limit_mid) extra="$extra CLAUDE_AUTH=oauth" ;;
	esac
	h=$ROOT/home w=$ROOT/work
	rm -rf "$h" "$w"
	mkdir -p "$h" "$w" "$ROOT/tmp"
	echo "# plan: 2.3 login form" >"$w/README.md"
	# a file read a page at a time in tools_page
	seq 2000 | sed 's/^/line /' >"$w/big.txt"
	cmd=$(command_of "$fmt")
	# kilo run --auto: permissions it would ask for are granted
	case $sc in *_auto) cmd=$(echo "$cmd" | sed 's/^kilo run /kilo run --auto /') ;; esac
	# copilot without --allow-all-tools: its tools ask, nobody answers
	case $sc in *_noallow) cmd=$(echo "$cmd" | sed 's/ --allow-all-tools//') ;; esac
	case $sc in *_turns1) cmd="$cmd --max-turns 1" ;; esac
	unset_key=
	if [ "$base" = missing_key ]; then
		case $CLIENT in
		copilot) unset_key='unset COPILOT_PROVIDER_API_KEY' ;;
		grok) unset_key='unset GROK_API_KEY' ;;
		cline) unset_key='unset CLINE_KEY; cline_settings' ;;
		*) unset_key='unset ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY' ;;
		esac
	fi
	n0=$(cat "$ROOT/mock/$mock.log" 2>/dev/null | wc -l)
	t0=$(date +%s.%N)
	(cd "$w" && exec env -i PATH="$PATH" HOME="$h" TMPDIR="$ROOT/tmp" \
	    TZ=UTC LANG=C.UTF-8 MOCK_URL="$url" AGENT_BIN="$BIN" \
	    CBEXEC_COPILOT_PKG_CACHE="$ROOT/copilot-pkg" $extra \
	    setsid sh -c '
		echo $$ >"$1"; . "$2"; '"$unset_key"'
		exec timeout -k 5 "$3" '"$cmd" sh "$ROOT/sid" "$AG/env/$CLIENT.sh" \
	    "$REC_TIMEOUT" </dev/null >"$ROOT/out" 2>"$ROOT/err")
	rc=$?
	t1=$(date +%s.%N)
	# what is left of the client's session: counted, then ended
	sid=$(cat "$ROOT/sid")
	left=$(ps -e -o pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }')
	nleft=$(echo $left | wc -w)
	for p in $left; do kill "$p" 2>/dev/null; done
	n1=$(cat "$ROOT/mock/$mock.log" 2>/dev/null | wc -l)
	stem=$DIR/$sc-$fmt
	# all four files, empty ones too, as the other recordings
	cp "$ROOT/out" "$stem.stdout"
	cp "$ROOT/err" "$stem.stderr"
	echo $rc >"$stem.exit"
	{
		echo "$cmd"
		echo "# client: $CLIENT $VERSION"
		echo "# env: MOCK_URL=$url HOME=$h${extra:+ $extra}; . env/$CLIENT.sh${unset_key:+; $unset_key}"
		echo "# cwd: $w (contains README.md, big.txt); stdin: /dev/null"
		echo "# elapsed_s: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
		echo "# requests to the mock: $((n1 - n0))"
		[ "$nleft" -gt 0 ] && echo "# lingering: $nleft processes of the client's session after it exited (ended)"
		[ $rc -eq 124 ] && echo "# cut short by timeout after ${REC_TIMEOUT}s"
	} >"$stem.cmd"
	printf '%s %-22s %-5s exit %3s %6ss %3s requests%s\n' "$CLIENT" "$sc" "$fmt" \
	    "$rc" "$(sed -n 's/^# elapsed_s: //p' "$stem.cmd")" $((n1 - n0)) \
	    "$([ "$nleft" -gt 0 ] && echo ", $nleft lingering")"
}

for sc in $SCENARIOS; do
	for fmt in $FORMATS; do
		record "$sc" "$fmt"
	done
done
