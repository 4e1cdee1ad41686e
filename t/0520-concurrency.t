#!/bin/sh
# SPDX-License-Identifier: ISC
# 50 cbexec on one circuit at the same instant (SPEC §6 lock): never two
# runs at once, every loser exits 123 BUSY without running, and the state
# counts exactly the runs that happened.  With --wait-lock all 50 run, one
# after the other.  Meanwhile --status (no lock) always reads a whole file.
. "$(dirname "$0")/lib.sh"
N=50

# The command takes a mkdir mutex: if it is already held, two runs overlap.
cat > step.sh <<'EOF'
#!/bin/sh
if mkdir mutex 2>/dev/null; then
	echo "$$" >> ran
	sleep "${HOLD:-0.05}"
	rmdir mutex
else
	echo "$$" >> ran
	echo "$$" >> overlaps
fi
EOF
chmod +x step.sh

# start N, held at a gate until all are forked, then release them together
burst() {	# burst TAG CBEXEC-OPTIONS...
	_tag=$1; shift
	rm -f ready gate.lock
	exec 8> gate.lock
	flock -x 8
	_i=0 _pids=
	while [ $_i -lt $N ]; do
		_i=$((_i + 1))
		(
			exec 8>&-	# else the gate's lock lives on in us
			echo >> ready
			flock -s -o gate.lock "$CBEXEC" -q --no-prompt \
			    --progress exit --name c "$@" -- ./step.sh \
			    2> "err.$_tag.$_i"
			echo $? > "rc.$_tag.$_i"
		) &
		_pids="$_pids $!"
	done
	poll_until 20 sh -c "[ \$(cat ready 2>/dev/null | wc -l) -ge $N ]"
	exec 8>&-		# all of them go
	# shellcheck disable=SC2086
	wait $_pids
}
ntmp() { set -- "$1"/.*.tmp.*; if [ -e "$1" ]; then echo $#; else echo 0; fi; }
codes() {	# codes TAG: "CODE COUNT" lines
	cat rc."$1".* | sort -n | uniq -c | awk '{print $2 ":" $1}' | tr '\n' ' '
}

# ---- fail at once: one runs, the rest are BUSY ------------------------------
start=$(date +%s%N)
export HOLD=0.3; burst a
el=$(( ($(date +%s%N) - start) / 1000000 ))
runs=$(wc -l < ran)
ok0=$(cat rc.a.* | grep -c '^0$')
busy=$(cat rc.a.* | grep -c '^123$')
is "$(ls rc.a.* | wc -l)" $N "all $N invocations finished (${el}ms)"
is "$(cat overlaps 2>/dev/null | wc -l)" 0 "no two runs at once"
is "$((ok0 + busy))" $N "each exited 0 (ran) or 123 (BUSY): $(codes a)"
is "$ok0" "$runs" "exactly the invocations that exited 0 ran"
ok "$([ "$busy" -ge 1 ]; echo $?)" "they did contend: $busy were BUSY"
msg=ok
for f in rc.a.*; do
	[ "$(cat "$f")" = 123 ] || continue
	grep -q busy "err.${f#rc.}" || msg="no 'busy' message in err.${f#rc.}"
done
is "$msg" ok "every BUSY one said it was busy"
is "$(jget "$CBEXEC_STATE_DIR/c.json" iteration)" "$runs" \
    "state iteration = runs that happened ($runs)"
is "$(ntmp "$CBEXEC_STATE_DIR")" 0 "no temp file left"

# ---- --wait-lock: all of them run, serially ---------------------------------
before=$runs
# readers that take no lock poll the file the whole time
rm -f status.bad
(
	while [ ! -e stop ]; do
		"$CBEXEC" --status --json --name c > st.out 2> st.err
		rc=$?
		echo >> reads
		if [ $rc -ne 0 ] && [ $rc -ne 120 ]; then
			echo "rc $rc: $(cat st.err)" >> status.bad
		elif ! jget st.out iteration > /dev/null 2>&1; then
			echo "unparsable: $(head -c 200 st.out)" >> status.bad
		fi
	done
) &
reader=$!
start=$(date +%s%N)
HOLD=0.02; burst b --wait-lock=60
el=$(( ($(date +%s%N) - start) / 1000000 ))
touch stop
wait $reader
runs=$(wc -l < ran)
is "$(codes b)" "0:$N " "--wait-lock: all $N exited 0 (${el}ms)"
is "$((runs - before))" $N "--wait-lock: all $N ran"
is "$(cat overlaps 2>/dev/null | wc -l)" 0 "--wait-lock: no two runs at once"
is "$(jget "$CBEXEC_STATE_DIR/c.json" iteration)" $((before + N)) \
    "--wait-lock: iteration went up by exactly $N"
reads=$(cat reads 2>/dev/null | wc -l)
is "$(head -n 3 status.bad 2>/dev/null)" "" \
    "--status during the writes ($reads reads) always read a whole file"
ok "$([ "$reads" -ge 5 ]; echo $?)" "the reader did read ($reads times)"
is "$(ntmp "$CBEXEC_STATE_DIR")" 0 "--wait-lock: no temp file left"
done_testing
