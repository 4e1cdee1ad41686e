#!/bin/sh
# SPDX-License-Identifier: ISC
# The etcd store on a real 3-member etcd cluster (--store etcd://h1,h2,h3):
# the URL, the state under one key as --status --json shows it, the lock
# a key attached to a lease that goes at the end, every operator verb,
# --status --all, the metrics label, the lease renewed through a run
# longer than it, a corrupt key, the start record, the store's clock, a
# store that is gone or silent (125 in bounded time), --store-fallback
# local, and no descriptor of the store's reaching the command.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/etcd.sh"

ETCD_HEARTBEAT=50 ETCD_ELECTION=500 etcd_start
S="--store $ETCD_URL"
ms() { echo $(( $(date +%s%N) / 1000000 )); }
eget() { ectl get "$1" --print-value-only; }
ecount() { ectl get "$1" --keys-only | grep -c .; }

# ---- the URL ----
for bad in 'etcd://' 'etcd://h:0' 'etcd://h1,,h2' 'etcd://h/prefix' \
    'etcds://u:s3cret@h:99999' 'etcd://[::1'; do
	"$CBEXEC" --store "$bad" --name x -- true >out 2>err; rc=$?
	is "$rc:$(head -1 err | cut -c1-28):$(grep -c s3cret err)" \
	    "125:cbexec: invalid --store URL::0" \
	    "malformed URL '$bad': 125, one line, no password"
done
"$CBEXEC" --store 'etcd://h' --store-timeout 0 --name x -- true 2>err
rc=$?
is "$rc" 125 "a store timeout of 0 is refused"
"$CBEXEC" --store "$ETCD_URL" --store-ca /nonexistent --name x -- \
    touch ran-ca 2>err; rc=$?
is "$rc:$([ -e ran-ca ] && echo ran)" "125:" "--store-ca with etcd:// (no TLS): 125, not run"
like "$(cat err)" "are for etcds:// \(TLS\)" "saying so"

# ---- the state under one key ----
"$CBEXEC" $S --name a -- sh -c 'exit 3' 2>err; rc=$?
is "$rc" 3 "a run over etcd passes its status through"
"$CBEXEC" $S --name a -- true 2>err; rc=$?
is "$rc" 0 "a second run"
eget cbexec:circuit:a >got.json
"$CBEXEC" $S --status --json a >status.json; rc=$?
is "$rc" 0 "--status --json reads it"
# The state object, without the view's members that lead --status --json
# (the vocabulary's, not the state's).
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>);
	delete @$j{qw(v circuit path changed_at reason runs_since_progress running holder)};
	print JSON::PP->new->canonical->encode($j), "\n"' <status.json >state.json
mv state.json status.json
is "$(jcompact got.json)" "$(jcompact status.json)" \
    "etcdctl get shows what --status --json shows"
is "$(jget got.json iteration):$(jget got.json generation)" "2:2" \
    "iteration 2, generation 2 (one per save)"
is "$(ecount cbexec:lock:a):$(ecount cbexec:run:a)" "0:0" \
    "the lock key went with the lease, no start record is left"
is "$(ls "$CBEXEC_STATE_DIR" 2>/dev/null | grep -c 'a.json$')" 0 \
    "no local state file"
CBEXEC_STORE=$ETCD_URL "$CBEXEC" --status a >/dev/null; rc=$?
is "$rc" 0 "CBEXEC_STORE names the store"
echo "{\"store\":\"$ETCD_URL\"}" >cfg.json
"$CBEXEC" -c cfg.json --name a -- true 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:a | jget /dev/stdin iteration)" "0:3" \
    "the config's store"
# One member's address is enough, the others are tried in turn.
"$CBEXEC" --store "etcd://127.0.0.1:$(free_ports 1),$ETCD_EPS" --name a \
    -- true 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:a | jget /dev/stdin iteration)" "0:4" \
    "an endpoint nobody listens on first: the next one is asked"

# ---- the lock: a key attached to the lease, while the run goes on ----
"$CBEXEC" $S --name held -- sh -c 'etcdctl --endpoints "$1" get \
    cbexec:lock:held -w json >lock.json' sh "$ETCD_EPS" 2>err
is "$?" 0 "a run"
lease=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{kvs}[0]{lease} // 0' lock.json)
ok "$([ "$lease" -gt 0 ]; echo $?)" "while it runs, cbexec:lock:NAME is attached to a lease ($lease)"
like "$(perl -MJSON::PP -MMIME::Base64 -0777 -ne 'print decode_base64(decode_json($_)->{kvs}[0]{value})' lock.json)" \
    "^\{\"host\":\"[^\"]+\",\"pid\":[0-9]+\}$" "its value names the holder"
is "$(ectl lease timetolive "$(printf %x "$lease")" 2>&1 | grep -c 'already expired')" 1 \
    "the lease is revoked at the end"

# ---- operator verbs over etcd ----
"$CBEXEC" $S --trip --reason maintenance a 2>err; rc=$?
is "$rc" 0 "--trip"
"$CBEXEC" $S --name a -- touch ran 2>err; rc=$?
is "$rc:$([ -e ran ] && echo ran)" "120:" "refused while tripped, not run"
like "$(cat err)" "reset-circuit --name a" "the hint names the circuit"
"$CBEXEC" $S --status --all >all; rc=$?
is "$rc" 120 "--status --all: 120 with an OPEN circuit in etcd"
like "$(cat all)" '^[● ]*a +OPEN' "lists the store's circuit"
like "$(cat all)" '^[● ]*held +CLOSED' "... every one"
"$CBEXEC" $S --status --all --json >all.json; rc=$?
is "$rc:$(perl -MJSON::PP -0777 -ne 'print join(",", map { $_->{circuit} } @{decode_json($_)})' all.json 2>&1)" \
    "120:a,held" "--status --all --json"
"$CBEXEC" $S --reset-circuit a 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:a | jget /dev/stdin state)" "0:CLOSED" \
    "--reset-circuit closes it in etcd"
"$CBEXEC" $S --skip --task t1 --reason later a 2>err; rc=$?
"$CBEXEC" $S --name a --task t1 -- touch ran-skip 2>err2; rc2=$?
is "$rc:$rc2:$([ -e ran-skip ] && echo ran)" "0:0:" "--skip: the task's run is not started"
"$CBEXEC" $S --unskip t1 a 2>err; rc=$?
"$CBEXEC" $S --name a --task t1 -- touch ran-skip 2>err2; rc2=$?
is "$rc:$rc2:$([ -e ran-skip ] && echo ran)" "0:0:ran" "--unskip: it runs again"
"$CBEXEC" $S --history a >hist; rc=$?
is "$rc:$(grep -c 'CLOSED -> OPEN' hist)" "0:1" "--history over etcd"
"$CBEXEC" $S --status nosuch 2>err; rc=$?
is "$rc" 125 "no such circuit in etcd: 125"
like "$(cat err)" "no such circuit 'nosuch': cbexec:circuit:nosuch in etcd://" \
    "naming the key and the store"
"$CBEXEC" $S --record --exit 1 --message 'boom' a; rc=$?
is "$rc:$(eget cbexec:circuit:a | jget /dev/stdin last_error.message)" \
    "1:boom" "--record over etcd"
"$CBEXEC" $S --trip --create --reason new fresh 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:fresh | jget /dev/stdin state)" "0:OPEN" \
    "--trip --create"

# A circuit whose first run is going on has only its lock: listed, running.
"$CBEXEC" $S --name firstrun -- sh -c 'touch first.started; sleep 30' \
    2>/dev/null & first=$!
poll_until 20 test -e first.started
"$CBEXEC" $S --status --all >first.out 2>&1
like "$(grep firstrun first.out)" "^ *firstrun +CLOSED .*running \(pid $first\)" \
    "--status --all: a first run going on is listed, running, with its pid"
"$CBEXEC" $S --status --all --json >first.json 2>&1
is "$(perl -MJSON::PP -0777 -ne 'my ($n) = grep { $_->{circuit} eq "firstrun" }
	@{decode_json($_)}; print join "|", $n->{running} ? "running" : "-",
	$n->{running}{pid} // "-"' first.json)" "running|$first" "--json: running, its pid"
kill -TERM $first; wait $first 2>/dev/null

# ---- metrics ----
"$CBEXEC" $S --name m --metrics m.prom -- true 2>err
like "$(grep '^cbexec_runs_total' m.prom)" \
    "^cbexec_runs_total\{circuit=\"m\",store=\"etcd://$ETCD_EPS\"\} 1\$" \
    "metrics carry the store label"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <m.prom >/dev/null 2>&1; ok $? "promtool accepts them"
else
	skip "promtool not installed"
fi

# ---- the lease is renewed through a run longer than it ----
# shellcheck disable=SC2086
renewed_past_lease etcd $S

# ---- the command inherits nothing of the store's ----
"$CBEXEC" --name fds -- sh -c 'ls /proc/$$/fd >fds.file' 2>err
"$CBEXEC" $S --name fds -- sh -c 'ls /proc/$$/fd >fds.out' 2>err
is "$(sort -n fds.out | tr '\n' ' ')" "$(sort -n fds.file | tr '\n' ' ')" \
    "the command's descriptors are those it gets without a store (no socket of libcurl's)"

# ---- a corrupt state in etcd ----
ectl put cbexec:circuit:bad 'not json' >/dev/null
"$CBEXEC" $S --name bad -- touch ran-bad 2>err; rc=$?
is "$rc:$([ -e ran-bad ] && echo ran)" "125:" "a corrupt state: 125, not run"
like "$(cat err)" 'cbexec:circuit:bad in etcd://.*corrupt' "naming the key"
"$CBEXEC" $S --reset-circuit bad 2>err; rc=$?
is "$rc" 0 "--reset-circuit starts it fresh"
like "$(ectl get --prefix cbexec:corrupt:bad: --keys-only)" \
    '^cbexec:corrupt:bad:20' "the corrupt state is kept aside"
is "$(eget cbexec:circuit:bad | jget /dev/stdin state)" CLOSED "fresh and CLOSED"

# ---- a run on record before it starts ----
"$CBEXEC" $S --name rec -- sh -c 'etcdctl --endpoints "$1" get cbexec:run:rec \
    --print-value-only >rec' sh "$ETCD_EPS" 2>err
like "$(cat rec)" '^\{"run":1,"generation":0,"pid":[0-9]+,"host":"[^"]*","started":"20' \
    "while it runs, cbexec:run:NAME says run 1 began"
is "$(ecount cbexec:run:rec)" 0 "its save deleted the record"
"$CBEXEC" $S --store-lease 1s --name k -- sh -c 'kill -9 $PPID; exit 1' \
    2>/dev/null; rc=$?
is "$rc:$(eget cbexec:run:k | jget /dev/stdin run)" "137:1" \
    "a holder killed by its own command: its run is on record"
"$CBEXEC" $S --name k --wait-lock=20s -- true 2>err; rc=$?
eget cbexec:circuit:k >k.json
is "$rc:$(jget k.json iteration):$(jget k.json history.0.type)" "0:2:killed" \
    "the next holder, once the lease lapsed, counts it first"
is "$(jget k.json history.0.reason)" "cbexec was killed during run 1" \
    "the killed run's message"

# ---- the store's clock, not this host's ----
if why=$(shim_why clockshim); then
	LD_PRELOAD=$T_DIR/clockshim.so CLOCK_SKEW=7200 "$CBEXEC" $S --name fast \
	    -- true 2>/dev/null
	d=$(eget cbexec:circuit:fast | perl -MJSON::PP -MTime::Local -0777 -e '
		my $v = decode_json(<STDIN>)->{updated_at};
		$v =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ or die;
		print timegm($6, $5, $4, $3, $2 - 1, $1) - time, "\n"')
	ok "$([ "$d" -gt -3 ] && [ "$d" -lt 3 ]; echo $?)" \
	    "a host two hours fast stamps the state with the store's time (${d}s off)"
else
	skip "$why"
fi

# ---- a store that is gone, or silent: 125 in bounded time ----
set -- $(free_ports 2)
t0=$(ms)
"$CBEXEC" --store "etcd://127.0.0.1:$1,127.0.0.1:$2" --name x -- touch ran-x \
    2>err; rc=$?
is "$rc:$([ -e ran-x ] && echo ran)" "125:" "nobody listening: 125, not run"
like "$(cat err)" "^cbexec: store etcd://127.0.0.1:$1,127.0.0.1:$2: .*(refused|connect)" \
    "naming the store and why"
perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(Listen => 5, LocalAddr => "127.0.0.1",
	    LocalPort => 0, ReuseAddr => 1) or die;
	open(my $f, ">", "$ARGV[0].tmp") or die; print $f $s->sockport, "\n";
	close $f; rename "$ARGV[0].tmp", $ARGV[0]; my @c;
	while (my $c = $s->accept) { push @c, $c }' silent.port & silent=$!
poll_until 20 test -s silent.port
t0=$(ms)
"$CBEXEC" --store "etcd://127.0.0.1:$(cat silent.port)" --store-timeout 300ms \
    --name x -- touch ran-x 2>err; rc=$?
t=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-x ] && echo ran)" "125:" "a silent store: 125, not run"
like "$(cat err)" "no answer within --store-timeout" "says it did not answer"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "no timing under valgrind"
else
	ok "$([ "$t" -lt 3000 ]; echo $?)" "within the timeout's bound (${t}ms)"
fi
# (a timeout of 3 s: what is left of it after the silent member's share
# outlasts an election of the cluster on a loaded machine)
"$CBEXEC" --store "etcd://127.0.0.1:$(cat silent.port),$ETCD_EPS" \
    --store-timeout 3s --name x -- true 2>err; rc=$?
is "$rc" 0 "a silent member first: the others are asked within the timeout"
[ "$rc" = 0 ] || sed 's/^/# /' err
kill $silent; wait $silent 2>/dev/null

# ---- one schema: members a newer cbexec wrote survive, outputs kept ----
# The same JSON under cbexec:circuit:NAME as in a state file and in Redis
# (t/0957-store-schema.t): what this cbexec does not know -- at the top
# and in history events -- is written back byte for byte after a run and
# an operator's verbs; the outputs member is the state's, "v" the view's.
kept() {
	_all=0
	for _m in '"run_started": {"iteration": 4, "host": "build-7", "pid": 4242, "at": "2026-11-27T01:43:00.000Z"}' \
	    '"labels":["nightly", "gpu"]' '"priority" :  2.50' \
	    '"note\u00e9": "caf\u00e9 \"quoted\""' \
	    '"host": "build-7", "duration_ms": 1234' \
	    '"cause":{"file":"a.c","line":3}'; do
		[ "$(grep -cF -- "$_m" "$1")" = 1 ] || {
			echo "# lost: $_m"; _all=1; }
	done
	ok $_all "$2: every member it does not know is kept, byte for byte"
}
ectl put cbexec:circuit:nm <"$T_DIR/state/v1-newer-members.json" >/dev/null
"$CBEXEC" $S -q --progress exit --name nm --log - -- sh -c 'echo out' \
    >/dev/null 2>&1; rc=$?
eget cbexec:circuit:nm >nm.json
is "$rc:$(jget nm.json iteration):$(jget nm.json generation)" "0:4:4" \
    "a run on a state with members it does not know: counted and saved"
kept nm.json "after a run"
is "$(perl -MJSON::PP -0777 -ne '$j = decode_json($_); print exists $j->{outputs} ? "outputs" : "-",
    exists $j->{v} ? ",v" : ""' nm.json)" "outputs" \
    "the state in etcd has its outputs member, not the view's v"
"$CBEXEC" $S --trip --reason maintenance nm 2>/dev/null &&
    "$CBEXEC" $S --reset-circuit nm 2>/dev/null; rc=$?
eget cbexec:circuit:nm >nm.json
is "$rc:$(jget nm.json state)" "0:CLOSED" "--trip, then --reset-circuit"
kept nm.json "after --trip and --reset-circuit"
"$CBEXEC" $S --status --json nm >status.json
is "$(jget status.json v):$(jget status.json run_started.host)" "2:build-7" \
    "--status --json: v 2, and the members it does not know"

# ---- --store-fallback local ----
"$CBEXEC" --store "etcd://127.0.0.1:$1" --store-fallback local --name fb \
    --log fb.log -- sh -c 'echo ran >fb-ran' 2>err; rc=$?
is "$rc:$(cat fb-ran 2>/dev/null)" "0:ran" "fallback: the command runs"
like "$(cat err)" "running on the local state .*/fb.json instead \(--store-fallback local\)" \
    "and says so"
is "$(jget "$CBEXEC_STATE_DIR/fb.json" iteration)" 1 "on the local state file"

# ---- a member killed: the cluster goes on, and so does cbexec ----
etcd_kill 1
"$CBEXEC" $S --name a -- true 2>err; rc=$?
is "$rc" 0 "one member of three down (the first named): runs"
etcd_revive 1

done_testing
