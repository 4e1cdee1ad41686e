#!/bin/sh
# SPDX-License-Identifier: ISC
# The shared store on a real Redis (--store): the state under one key as
# --status --json shows it, the URL, the name it needs, bounded waits for
# a store that is gone or silent, --store-fallback local, the lease
# renewed through a run longer than it, the operator verbs, --status
# --all, the metrics label, a corrupt key, and AOF persistence.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start --appendonly yes --appendfsync always
S="--store $REDIS_URL"
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- the URL ----
"$CBEXEC" --store 'redis://u:s3cret@host:99999/0' --name x -- true \
    >out 2>err; rc=$?
is "$rc" 125 "a port out of range: 125"
like "$(head -1 err)" '^cbexec: invalid --store URL: the port' "says what is wrong"
is "$(grep -c s3cret err)" 0 "never repeats the password"
for bad in 'http://h' 'redis://' 'redis://h/x' 'unix://rel.sock' \
    'unix:///s?db=x' 'redis://@h' 'rediss://' 'redis://u:p@h:0'; do
	"$CBEXEC" --store "$bad" --name x -- true >out 2>err; rc=$?
	is "$rc:$(head -1 err | cut -c1-27)" "125:cbexec: invalid --store URL" \
	    "malformed URL '$bad': 125, one line"
done
CBEXEC_STORE='ftp://x' "$CBEXEC" --name x -- true 2>err; rc=$?
is "$rc" 125 "CBEXEC_STORE is checked too"
like "$(cat err)" 'CBEXEC_STORE: invalid --store URL' "naming the variable"
"$CBEXEC" $S -- true 2>err; rc=$?
is "$rc" 125 "the store needs a circuit name"
like "$(cat err)" 'give --name NAME' "and says so"
"$CBEXEC" $S --store-lease 0 --name x -- true 2>err; rc=$?
is "$rc" 125 "a lease of 0 is refused"

# ---- the state under one key ----
"$CBEXEC" $S --name a -- sh -c 'exit 3' 2>err; rc=$?
is "$rc" 3 "a run over the store passes its status through"
"$CBEXEC" $S --name a -- true 2>err; rc=$?
is "$rc" 0 "a second run"
rcli GET cbexec:circuit:a >got.json
"$CBEXEC" $S --status --json a >status.json; rc=$?
is "$rc" 0 "--status --json reads it"
# The state object, without the view's members that lead --status --json
# (the vocabulary's, not the state's).
state_of() {
	perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>);
		delete @$j{qw(v circuit path changed_at reason runs_since_progress running holder)};
		print JSON::PP->new->canonical->encode($j), "\n"' < "$1" > "$1.state" &&
	mv "$1.state" "$1"
}
state_of status.json
is "$(jcompact got.json)" "$(jcompact status.json)" \
    "redis-cli GET shows what --status --json shows"
is "$(jget got.json iteration):$(jget got.json generation)" "2:2" \
    "iteration 2, generation 2 (one per save)"
is "$(rcli EXISTS cbexec:lock:a)" 0 "the lease is given back at the end"
is "$(ls "$CBEXEC_STATE_DIR" 2>/dev/null | grep -c 'a.json$')" 0 \
    "no local state file"
CBEXEC_STORE=$REDIS_URL "$CBEXEC" --status a >/dev/null; rc=$?
is "$rc" 0 "CBEXEC_STORE names the store"
echo "{\"store\":\"$REDIS_TCP\"}" >cfg.json
"$CBEXEC" -c cfg.json --name a -- true 2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin iteration)" "0:3" \
    "the config's store, over TCP on loopback"

# ---- operator verbs over the store ----
"$CBEXEC" $S --trip --reason maintenance a 2>err; rc=$?
is "$rc" 0 "--trip"
"$CBEXEC" $S --name a -- touch ran 2>err; rc=$?
is "$rc:$([ -e ran ] && echo ran)" "120:" "refused while tripped, not run"
like "$(cat err)" "reset-circuit --name a" "the hint names the circuit"
"$CBEXEC" $S --status --all >all; rc=$?
is "$rc" 120 "--status --all: 120 with an OPEN circuit in the store"
like "$(cat all)" '^(● )?a +OPEN' "lists the store's circuit"
"$CBEXEC" $S --reset-circuit a 2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin state)" "0:CLOSED" \
    "--reset-circuit closes it in the store"
"$CBEXEC" $S --status nosuch 2>err; rc=$?
is "$rc" 125 "no such circuit in the store: 125"
like "$(cat err)" "no such circuit 'nosuch': cbexec:circuit:nosuch in unix://" \
    "naming the key and the store"
"$CBEXEC" $S --record --exit 1 --message 'boom' a; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin last_error.message)" \
    "1:boom" "--record over the store"

# ---- metrics and log ----
"$CBEXEC" $S --name m --metrics m.prom -- true 2>err; rc=$?
like "$(grep '^cbexec_runs_total' m.prom)" \
    "^cbexec_runs_total\{circuit=\"m\",store=\"unix://$REDIS_SOCK\"\} 1\$" \
    "metrics carry the store label"
is "$(grep '^cbexec_store_fallback' m.prom | awk '{print $2}')" 0 \
    "cbexec_store_fallback 0"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <m.prom >/dev/null 2>&1; ok $? "promtool accepts them"
else
	skip "promtool not installed"
fi

# ---- the lease is renewed through a run longer than it ----
# shellcheck disable=SC2086
renewed_past_lease unix $S

# ---- a corrupt state in the store ----
rcli SET cbexec:circuit:bad 'not json' >/dev/null
"$CBEXEC" $S --name bad -- touch ran-bad 2>err; rc=$?
is "$rc:$([ -e ran-bad ] && echo ran)" "125:" "a corrupt state: 125, not run"
like "$(cat err)" 'cbexec:circuit:bad in unix://.*corrupt' "naming the key"
"$CBEXEC" $S --reset-circuit bad 2>err; rc=$?
is "$rc" 0 "--reset-circuit starts it fresh"
like "$(rcli KEYS 'cbexec:corrupt:bad:*')" '^cbexec:corrupt:bad:20' \
    "the corrupt state is kept aside"
is "$(rcli GET cbexec:circuit:bad | jget /dev/stdin state)" CLOSED "fresh and CLOSED"

# ---- a store that is gone, or silent: 125 in bounded time ----
port=$(free_port)
t0=$(ms)
"$CBEXEC" --store "redis://127.0.0.1:$port" --name x -- touch ran-x 2>err; rc=$?
is "$rc:$([ -e ran-x ] && echo ran)" "125:" "nothing listening: 125, not run"
like "$(cat err)" "^cbexec: store redis://127.0.0.1:$port/0: cannot connect" \
    "naming the store"
# A server that accepts and never answers.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(5)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' silent.port & silent=$!
poll_until "$HELPER_START" test -s silent.port
t0=$(ms)
"$CBEXEC" --store "redis://127.0.0.1:$(cat silent.port)" --store-timeout 300ms \
    --name x -- touch ran-x 2>err; rc=$?
t=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-x ] && echo ran)" "125:" "a silent store: 125, not run"
like "$(cat err)" "no answer within --store-timeout" "says it did not answer"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "no timing under valgrind"
else
	ok "$([ "$t" -lt 3000 ] && echo 0 || echo 1)" \
	    "within the timeout's bound (${t}ms)"
fi
kill $silent; wait $silent 2>/dev/null

# ---- --store-fallback local ----
"$CBEXEC" --store "redis://127.0.0.1:$port" --store-fallback local --name fb \
    --log fb.log --metrics fb.prom -- sh -c 'echo ran >fb-ran' 2>err; rc=$?
is "$rc:$(cat fb-ran 2>/dev/null)" "0:ran" "fallback: the command runs"
like "$(cat err)" "running on the local state .*/fb.json instead \(--store-fallback local\)" \
    "and says so on stderr"
like "$(cat fb.log)" '"event":"store_fallback"' "and in the log"
is "$(grep '^cbexec_store_fallback' fb.prom | awk '{print $2}')" 1 \
    "and in the metrics"
is "$(jget "$CBEXEC_STATE_DIR/fb.json" iteration)" 1 "on the local state file"
"$CBEXEC" --store "redis://127.0.0.1:$port" --store-fallback local --status fb \
    2>err; rc=$?
is "$rc" 125 "operator verbs never fall back"

# ---- AOF: the state survives a restart (kill -9 of Redis itself) ----
rcli GET cbexec:circuit:a >before.json
redis_kill KILL
redis_start --appendonly yes --appendfsync always
"$CBEXEC" $S --status --json a >after.json; rc=$?
is "$rc" 0 "after a restart the circuit is there"
state_of after.json
is "$(jcompact after.json)" "$(jcompact before.json)" \
    "the same state (appendonly yes, appendfsync always)"

# ---- contrib: the shared-store examples ----
like "$(grep -c 'CBEXEC_STORE\|concurrencyPolicy: Forbid' \
    "$TOP/contrib/cbexec-k8s-cronjob.yaml")" '^[2-9]' \
    "the CronJob takes the store from CBEXEC_STORE, beside Forbid"
if python3 -c 'import yaml' 2>/dev/null; then
	python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]));
assert d["kind"] == "CronJob"' "$TOP/contrib/cbexec-k8s-cronjob.yaml"
	ok $? "the CronJob is YAML"
else
	skip "python3-yaml not installed"
fi
# The options of the unit's ExecStart are ones cbexec takes.
opts=$(sed -n '/^ExecStart=/,/-- /p' "$TOP/contrib/cbexec-shared.service" |
    sed 's/^ExecStart=cbexec//; s/\\$//; s/ -- .*//; s/--metrics [^ ]*//' |
    tr '\n' ' ')
CBEXEC_STORE=$REDIS_URL "$CBEXEC" $opts -- true 2>err; rc=$?
is "$rc" 0 "cbexec-shared.service's ExecStart options run as they are"

done_testing
