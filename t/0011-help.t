#!/bin/sh
# SPDX-License-Identifier: ISC
# --help as curl gives it: plain --help shows the options most runs need,
# the categories with the rest, and the exit statuses, in a terminal's
# height; --help all every option; --help CATEGORY one category's; every
# option is in exactly one category, and each of --help all's options in
# the man page and the completions (t/0900-contrib.t).
. "$(dirname "$0")/lib.sh"

out=$("$CBEXEC" --help); rc=$?
is "$rc" 0 "--help exits 0"
lines=$(printf '%s\n' "$out" | wc -l | tr -d ' ')
ok "$([ "$lines" -le 50 ]; echo $?)" "--help is short: $lines lines (timeout(1): 43)"
is "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l | tr -d ' ')" 0 \
	"--help: no line over 79 columns"
for o in --name --phase --timeout --budget --loop --log --metrics; do
	like "$out" "^ +(-., )?$o " "--help shows $o, which most runs need"
done
ok "$(printf '%s\n' "$out" | grep -q -- '--store-lease D'; [ $? -ne 0 ]; echo $?)" \
	"--help does not describe every option"
for c in circuit running agents store thresholds operator record; do
	like "$out" "^  $c " "--help lists the category $c"
done
like "$out" "cbexec --help CATEGORY; all: every option" "--help says how to see the rest"

all=$("$CBEXEC" --help all); rc=$?
is "$rc" 0 "--help all exits 0"
is "$(printf '%s\n' "$all" | awk 'length > 79' | wc -l | tr -d ' ')" 0 \
	"--help all: no line over 79 columns"
longs=$(printf '%s\n' "$all" | grep -oE -- '^  (-., )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
	grep -oE -- '--[a-z][a-z-]*' | sort)
nlong=$(printf '%s\n' "$longs" | wc -l | tr -d ' ')
ok "$([ "$nlong" -ge 72 ]; echo $?)" "--help all describes every option ($nlong)"
is "$(printf '%s\n' "$longs" | uniq -d)" "" "... each once"
like "$all" '^  128\+N ' "--help all: the exit statuses"
like "$all" '^usage: cbexec \[OPTIONS\] \[--\] COMMAND' "--help all: the usage"
like "$all" '^       cbexec --reset-account NAME' "--help all: every synopsis line"
"$CBEXEC" --help=all | cmp -s - /dev/stdin <<EOF2
$all
EOF2
ok $? "--help=all is --help all"

# Each category: its own options, and together every option once.
union=
for c in circuit running agents store thresholds operator record; do
	out=$("$CBEXEC" --help "$c"); rc=$?
	is "$rc" 0 "--help $c exits 0"
	got=$(printf '%s\n' "$out" | grep -oE -- '^  (-., )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
		grep -oE -- '--[a-z][a-z-]*')
	ok "$([ -n "$got" ]; echo $?)" "--help $c lists options"
	union="$union
$got"
done
is "$(printf '%s\n' "$union" | sed '/^$/d' | sort | tr '\n' ' ')" "$(printf '%s\n' "$longs" | tr '\n' ' ')" \
	"the categories hold every option of --help all, each once"
like "$("$CBEXEC" --help thresholds)" '^ +--cooldown D' "--help thresholds: --cooldown"
like "$("$CBEXEC" --help store)" '^ +--store-lease D' "--help store: --store-lease"
like "$("$CBEXEC" --help operator)" '^ +--reset-circuit' "--help operator: --reset-circuit"
like "$("$CBEXEC" --help record)" '^ +--stderr-file F' "--help record: --stderr-file"
like "$("$CBEXEC" --help agents)" '^ +--max-cost USD' "--help agents: --max-cost"
like "$("$CBEXEC" --help circuit)" '^ +--state FILE' "--help circuit: --state"
like "$("$CBEXEC" --help running)" '^  -k, --kill-after D' "--help running: --kill-after"
# The headings' words name the categories too, in any case.
is "$("$CBEXEC" --help 'agents and spend')" "$("$CBEXEC" --help agents)" "--help 'agents and spend'"
is "$("$CBEXEC" --help spend)" "$("$CBEXEC" --help agents)" "--help spend"
is "$("$CBEXEC" --help 'shared store')" "$("$CBEXEC" --help store)" "--help 'shared store'"
is "$("$CBEXEC" --help 'Operator verbs')" "$("$CBEXEC" --help operator)" "--help 'Operator verbs'"
is "$("$CBEXEC" -h thresh)" "$("$CBEXEC" --help thresholds)" "-h thresh (a beginning)"

err=$("$CBEXEC" --help nonsense 2>&1 >/dev/null); rc=$?
is "$rc" 125 "--help with an unknown category: 125"
like "$err" "unknown help category 'nonsense' \(all, circuit, running, agents, store, thresholds, operator, record\)" \
	"... naming the categories"
err=$("$CBEXEC" --help store extra 2>&1 >/dev/null); rc=$?
is "$rc:$err" "125:cbexec: too many arguments: 'extra'
Try 'cbexec --help' for more information." "--help CATEGORY WORD: too many arguments"
"$CBEXEC" --help >/dev/full 2>/dev/null; is "$?" 125 "--help >/dev/full: 125"
done_testing
