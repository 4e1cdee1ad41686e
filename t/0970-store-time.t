#!/bin/sh
# SPDX-License-Identifier: ISC
# Time from the store: a host whose clock is two hours fast (t/clockshim.so)
# stamps the state with Redis's time, and does not take a cooldown of one
# hour as passed on a circuit another host opened a minute ago.  The same
# host on its own state file (the control) does both by its own clock.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

if ! why=$(shim_why clockshim); then
	echo "1..0 # SKIP $why"
	exit 0
fi
redis_start
S="--store $REDIS_URL"
fast() { LD_PRELOAD=$T_DIR/clockshim.so CLOCK_SKEW=7200 "$CBEXEC" "$@"; }
# age FILE FIELD: seconds from now (this test's clock) to the time there.
age() {
	perl -MJSON::PP -MTime::Local -0777 -e '
		my $v = decode_json(<STDIN>)->{$ARGV[0]};
		$v =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ or die "no time";
		print timegm($6, $5, $4, $3, $2 - 1, $1) - time, "\n";
	' "$2" <"$1"
}

fast --name local -- true 2>/dev/null
d=$(age "$CBEXEC_STATE_DIR/local.json" updated_at)
ok "$([ "$d" -gt 7000 ] && echo 0 || echo 1)" \
    "control: the shim makes this host's clock 2 h fast (updated_at ${d}s ahead)"
fast $S --name shared -- true 2>/dev/null
rcli GET cbexec:circuit:shared >shared.json
d=$(age shared.json updated_at)
ok "$([ "$d" -gt -60 ] && [ "$d" -lt 60 ] && echo 0 || echo 1)" \
    "with --store the state has Redis's time (updated_at ${d}s from now)"

# Another host, whose clock is right, opens the circuit; cooldown 1 h.
O="--max-consecutive-errors 1 --cooldown 1h --no-prompt"
"$CBEXEC" $S --name cool $O -- false 2>/dev/null; rc=$?
is "$rc" 120 "a host with the right clock opens the circuit"
fast $S --name cool $O -- touch ran 2>err; rc=$?
is "$rc:$([ -e ran ] && echo ran)" "120:" \
    "the fast host does not take the hour as passed: refused, not run"
rcli GET cbexec:circuit:cool >cool.json
d=$(age cool.json opened_at)
ok "$([ "$d" -gt -60 ] && [ "$d" -lt 60 ] && echo 0 || echo 1)" \
    "opened_at is Redis's time (${d}s from now)"
# The control: the same on a state file, opened by the right clock.
"$CBEXEC" --name coolf $O -- false 2>/dev/null
fast --name coolf $O -- touch ran-f 2>/dev/null; rc=$?
is "$rc:$([ -e ran-f ] && echo ran)" "0:ran" \
    "control: on its own state file the fast host runs a trial"

done_testing
