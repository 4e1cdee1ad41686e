#!/bin/sh
# SPDX-License-Identifier: ISC
# Hostile input, each case under a time bound: binary and invalid UTF-8 in
# everything a command reports (SPEC §6: "The file is always valid UTF-8"),
# 10 MB lines, 10 000 status blocks, oversized and deeply nested state and
# config files, a FIFO for a state file, catastrophic and invalid regexes.
. "$(dirname "$0")/lib.sh"
_k=0
C() { _k=$((_k + 1)); ST="st$_k.json"; "$CBEXEC" -q --no-prompt --state "$ST" "$@"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# strict: perl's decode_json dies on malformed UTF-8, as jq and Python do
utf8json() {
	perl -MJSON::PP -0777 -e 'my $t = <STDIN>;
		eval { JSON::PP->new->utf8->decode($t); 1 } or do {
			print $@ =~ s/ at -e line.*//sr; exit 1 }' < "$1"
}
utf8jsonl() {	# every line of a JSON Lines file
	perl -MJSON::PP -ne 'eval { JSON::PP->new->utf8->decode($_); 1 } or do {
		print "line $.: ", $@ =~ s/ at -e line.*//sr; exit 1 }' < "$1"
}

# ---- invalid UTF-8 and binary ---------------------------------------------
bad='\377\376 \300\200 \355\240\200 \364\220\200\200 \000 \033[31m'
C --log u.log -- sh -c "printf '$bad error: boom\n' >&2; exit 1" 2>/dev/null
is "$?" 1 "binary stderr: the command's exit status"
is "$(utf8json "$ST")" "" "binary stderr: state file is valid UTF-8 JSON"
is "$(perl -MJSON::PP -0777 -e 'my $m = decode_json(<STDIN>)->{last_error}{message};
	print scalar(() = $m =~ /\x{FFFD}/g), $m =~ /\x00/ ? " NUL" : ""' < "$ST")" 11 \
    "binary stderr: the 11 invalid bytes stored as U+FFFD, NUL dropped"
is "$(utf8jsonl u.log)" "" "binary stderr: --log lines are valid UTF-8 JSON"
"$CBEXEC" --status --json --state "$ST" > status.json
is "$(utf8json status.json)" "" "binary stderr: --status --json is valid UTF-8 JSON"

# stdout of a failed run refines the error (SPEC §4): same rule for it
C -- sh -c "printf 'not ok 1 - $bad\n'; exit 1" > /dev/null
is "$(utf8json "$ST")" "" "binary stdout of a failed run: state is valid UTF-8"

# TASK comes from the command's stdout and is stored as last_failed_task,
# and in the STUCK open_reason and the history: always as valid UTF-8.
C -- sh -c "printf -- '---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\nTASK: t$bad\n---END_CBEXEC_STATUS---\n'; exit 1" > /dev/null
is "$(utf8json "$ST")" "" "invalid UTF-8 in TASK: state file is valid UTF-8 JSON"
C --progress status -- sh -c "printf 'STATUS: BLOCKED\nTASK: f$bad\n' > \"\$CBEXEC_STATUS_FILE\"; exit 1"
is "$(utf8json "$ST")" "" "invalid UTF-8 in the status file's TASK: state is valid UTF-8"
# ... and after max-retries of the same task, into open_reason and history
C -n 3 -- sh -c "printf -- '---CBEXEC_STATUS---\nTASK: s$bad\n---END_CBEXEC_STATUS---\n'; exit 1" > /dev/null 2>&1
is "$(perl -MJSON::PP -0777 -e 'print JSON::PP->new->decode(<STDIN>)->{outcome}' < "$ST")" STUCK "the same bad TASK 3 times: STUCK"
is "$(utf8json "$ST")" "" "STUCK on a bad TASK: state file is valid UTF-8 JSON"

# Operator text is stored too: --task, --reason.
C --task "$(printf 'k\377\376')" -- false
is "$(utf8json "$ST")" "" "invalid UTF-8 in --task: state file is valid UTF-8 JSON"
"$CBEXEC" -q --trip --create --reason "$(printf 'r\377\376')" --state trip.json 2>/dev/null
is "$(utf8json trip.json)" "" "invalid UTF-8 in --trip --reason: state is valid UTF-8"
# Text cbexec takes from its environment and config as it is: $USER (the
# history's "user") and a config rule's type.
"$CBEXEC" -q --trip --create --state user.json 2>/dev/null
USER=$(printf 'u\377\376') "$CBEXEC" -q --reset-circuit --state user.json 2>/dev/null
is "$(utf8json user.json)" "" "invalid UTF-8 in \$USER: state is valid UTF-8"
is "$(perl -MJSON::PP -0777 -e 'print decode_json(<STDIN>)->{history}[-1]{user} eq "u\x{FFFD}\x{FFFD}" ? "kept" : "lost"' < user.json)" \
    kept "invalid UTF-8 in \$USER: stored with U+FFFD"
printf '{"rules":[{"match":"boom","class":"recoverable","type":"t\377"}]}' > badtype.json
C --config badtype.json -- sh -c 'echo boom >&2; exit 1' 2>err
is "$?" 125 "a config file that is not UTF-8: 125"
like "$(cat err)" "badtype.json: not valid UTF-8 at byte 57" "... naming the file and the byte"

# ---- 10 MB single lines ----------------------------------------------------
head -c 10485760 /dev/zero | tr '\0' x > big; echo >> big
start=$(date +%s%N)
C -- sh -c 'cat big >&2; cat big; exit 3' > out 2> err
rc=$? el=$(ms "$start")
is "$rc" 3 "10 MB line on stdout and stderr: exit 3 (${el}ms)"
ok "$([ "$el" -lt 10000 ]; echo $?)" "10 MB lines: bounded time (${el}ms < 10s)"
cmp -s big out; ok $? "10 MB line: stdout byte-exact"
cmp -s big err; ok $? "10 MB line: stderr byte-exact"
len=$(perl -MJSON::PP -0777 -e 'print length decode_json(<STDIN>)->{last_error}{message}' < "$ST")
ok "$([ "$len" -gt 0 ] && [ "$len" -le 65536 ]; echo $?)" \
    "10 MB line: stored message bounded ($len bytes)"
ok "$([ "$(stat -c %s "$ST")" -lt 200000 ]; echo $?)" \
    "10 MB line: state file stays small ($(stat -c %s "$ST") bytes)"

# ---- 10 000 status blocks: the last one wins -------------------------------
awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\nTASK: t%d\nTESTS_PASSING: %d\n---END_CBEXEC_STATUS---\n", i, i }' > blocks
start=$(date +%s%N)
C -- sh -c 'cat blocks; exit 1' > /dev/null
rc=$? el=$(ms "$start")
is "$rc" 1 "10 000 status blocks: exit 1 (${el}ms)"
ok "$([ "$el" -lt 5000 ]; echo $?)" "10 000 status blocks: bounded time"
is "$(jget "$ST" last_failed_task)" t10000 "10 000 status blocks: the last wins"
# one block split over many writes, with 1 MB of noise between blocks
C -- sh -c 'printf -- "---CBEXEC_"; sleep 0.05; printf "STATUS---\nTA"; sleep 0.05
	printf "SK: split\n---END_CBEXEC_STATUS"; head -c 1000000 /dev/zero | tr "\0" "-"
	printf -- "---\n"; exit 1' > /dev/null
is "$(jget "$ST" last_failed_task)" split "a block split across writes is found"

# ---- state files -----------------------------------------------------------
truncate -s 100M huge.json
before=$(stat -c %Y.%s huge.json)
start=$(date +%s%N)
err=$("$CBEXEC" -q --no-prompt --state huge.json -- touch ran.huge 2>&1)
rc=$? el=$(ms "$start")
is "$rc" 125 "100 MB state file: exit 125"
ok "$([ "$el" -lt 5000 ]; echo $?)" "100 MB state file: bounded time (${el}ms)"
like "$err" "huge\.json.*(too large|size)" "100 MB state file: says so, naming it"
is "$(stat -c %Y.%s huge.json)" "$before" "100 MB state file: left untouched"
ok "$([ ! -e ran.huge ]; echo $?)" "100 MB state file: command not run"

perl -e 'print "{\"version\":1,\"state\":\"CLOSED\",\"last_progress_metric\":",
    "[" x 200000, "]" x 200000, "}"' > deep.json
err=$("$CBEXEC" -q --no-prompt --state deep.json -- true 2>&1)
is "$?" 125 "200 000-deep nested state: exit 125, no stack overflow"
like "$err" "deep\.json" "deep state: names the file"

# 14 MB of history (under the size cap): loads, trims, saves, quickly
perl -e 'print "{\"version\":1,\"state\":\"CLOSED\",\"iteration\":45000,\"history\":[",
    join(",", map { "{\"timestamp\":\"2026-11-22T01:02:03.456Z\",\"iteration\":$_,\"event\":\"progress\",\"progress\":true,\"exit_code\":0,\"reason\":\"" . ("r" x 250) . "\"}" } 1 .. 45000), "]}"' > hist.json
start=$(date +%s%N)
"$CBEXEC" -q --no-prompt --progress exit --state hist.json -- true
rc=$? el=$(ms "$start")
is "$rc" 0 "14 MB state with 45 000 events: runs (${el}ms)"
ok "$([ "$el" -lt 5000 ]; echo $?)" "14 MB state: bounded time"
is "$(jget hist.json iteration)" 45001 "14 MB state: counts on"
ok "$([ "$(stat -c %s hist.json)" -lt 1000000 ]; echo $?)" \
    "14 MB state: history trimmed to --history-size on save"

mkfifo fifo.json
start=$(date +%s%N)
err=$(timeout -s KILL 10 "$CBEXEC" -q --no-prompt --state fifo.json -- true 2>&1)
rc=$? el=$(ms "$start")
is "$rc" 125 "a FIFO as the state file: exit 125, no hang (${el}ms)"
like "$err" "fifo\.json" "FIFO: names the file"

# ---- config files ----------------------------------------------------------
echo '{"rules":[{"match":"x","type":"ok"},{"match":"(unclosed","type":"x","class":"fatal"}]}' > badre.json
err=$(C -c badre.json -- touch ran.re 2>&1)
is "$?" 125 "invalid regex in a rule: exit 125"
like "$err" "badre\.json.*rules\[1\]\.match" "invalid regex: names the file and the key"
ok "$([ ! -e ran.re ]; echo $?)" "invalid regex: command not run"

perl -e 'print "{\"timeout\":\"1s\",\"x\":", "[" x 100000, "]" x 100000, "}"' > deepc.json
err=$(C -c deepc.json -- true 2>&1)
is "$?" 125 "100 000-deep nested config: exit 125"
head -c 3000000 /dev/zero | tr '\0' ' ' > bigc.json; echo '{}' >> bigc.json
err=$(C -c bigc.json -- true 2>&1)
is "$?" 125 "3 MB config: exit 125"
like "$err" "bigc\.json" "3 MB config: names the file"

# A user rule with nested quantifiers against 64 KiB of a's that ends in b.
# glibc's regexec has no exponential backtracking here, but an unanchored
# loop that fails at the end of a long line is retried from every start
# position (quadratic), and classification is bounded by neither
# --timeout nor --budget: user rules see each line cut to 4 KiB, and the
# cut end does not match $.
echo '{"rules":[{"match":"(a+)+$","class":"fatal","type":"redos"}]}' > redos.json
perl -e 'print "a" x 70000, "b\n"' > as.txt
start=$(date +%s%N)
timeout -s KILL 10 "$CBEXEC" -q --no-prompt --state redos.st.json -c redos.json \
    -- sh -c 'cat as.txt >&2; exit 1' 2>/dev/null
rc=$? el=$(ms "$start")
is "$rc" 1 "catastrophic regex (a+)+\$ on 64 KiB of stderr: finishes within 10 s (${el}ms)"
done_testing
