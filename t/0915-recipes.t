#!/bin/sh
# SPDX-License-Identifier: ISC
# The recipes of the man page, README.md and contrib/ work as written:
# every crontab entry installs with crontab(1) and cds before it uses the
# project's files; the crontab.example step run under chronic mails only
# the runs that failed; the Kubernetes CronJob runs cbexec itself (exec
# form), so a SIGTERM reaches it as PID 1; the systemd units pass
# systemd-analyze verify and security, and the operator commands their
# comments give find the circuit the unit runs; and the resets cbexec and
# its alert print (the OPEN block's RESET line, --status's, the
# CbexecCircuitOpen annotation's, README's) work as printed with --metrics
# in play: run as printed, with no --metrics, they clear the alert --
# Debian's node_exporter serves the textfile the cron line wrote, and
# promtool's rule test fed with what it served before and after fires, then
# clears.  A tool that is not installed (Debian: cron, moreutils, systemd,
# util-linux's unshare, prometheus, prometheus-node-exporter) skips what
# needs it, saying so.
. "$(dirname "$0")/lib.sh"
CT=$TOP/contrib
MAN=$TOP/man/cbexec.1
README=$TOP/README.md

# A "cbexec" on PATH for the recipes: this tree's (or $CBEXEC's).
mkdir -p bin
printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" > bin/cbexec
chmod +x bin/cbexec

# --- crontab entries --------------------------------------------------
# cron_blocks: each block of the documents that holds a crontab entry
# (a .Bd -literal display of the man page, a fenced block of the README,
# the whole of contrib/crontab.example), as files cron.N, their origin in
# cron.N.from.
perl -e '
	my $cron = qr{^\s*(?:@(?:reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)\s|(?:[-0-9*/,]+\s+){3}(?:[-0-9*/,A-Za-z]+\s+){2}\S)};
	my ($n, @blocks) = (0);
	sub unroff { my $l = shift; $l =~ s/\\e/\\/g; $l =~ s/\\\(dq/"/g;
		$l =~ s/\\\(aq/\x27/g; $l =~ s/\\&//g; $l =~ s/\\-/-/g; $l }
	my ($man, $readme, $example) = @ARGV;
	open my $f, "<", $man or die; my ($in, @b, $start);
	while (<$f>) {
		if (/^\.Bd -literal/) { $in = 1; @b = (); $start = $.; next }
		if ($in && /^\.Ed/) { $in = 0; push @blocks, ["man/cbexec.1:$start", @b]; next }
		push @b, unroff($_) if $in && !/^\.(?:Pp|Ed)/;
	}
	close $f; open $f, "<", $readme or die; $in = 0;
	while (<$f>) {
		if (!$in && /^```/) { $in = 1; @b = (); $start = $.; next }
		if ($in && /^```/) { $in = 0; push @blocks, ["README.md:$start", @b]; next }
		push @b, $_ if $in;
	}
	close $f; open $f, "<", $example or die;
	push @blocks, ["contrib/crontab.example", <$f>];
	for my $bl (@blocks) {
		my ($from, @l) = @$bl;
		next unless grep { /$cron/ } @l;
		open my $o, ">", "cron.$n" or die; print $o @l; close $o;
		open $o, ">", "cron.$n.from" or die; print $o "$from\n"; close $o;
		$n++;
	}
' "$MAN" "$README" "$CT/crontab.example"
nblocks=$(ls cron.[0-9]* 2>/dev/null | grep -vc from)
ok "$([ "$nblocks" -ge 4 ]; echo $?)" "crontab entries found in the man page, README and contrib ($nblocks blocks)"

# Each entry, one per line: those that use the project's files cd there
# first (cron starts in $HOME), none holds a bare % (cron makes it a
# newline), and an agent step is quiet when it goes well (chronic, or its
# output in a log): cron mails whatever a job prints.
bad=
for f in cron.[0-9]*; do
	case $f in *.from) continue ;; esac
	from=$(cat "$f.from")
	bad=$bad$(FROM=$from perl -ne '
		next unless /^\s*(?:@\w+|(?:[-0-9*\/,]+\s+){3}[-0-9*\/,A-Za-z]+\s+[-0-9*\/,A-Za-z]+)\s+(\S.*)$/;
		my $c = $1;
		print "$ENV{FROM}: no cd before the project files: $c\n"
		    if ($c =~ /PROMPT\.md|\.\/agent-step/ && $c !~ /^cd\s+\S+\s*&&/);
		print "$ENV{FROM}: a bare % (cron turns it into a newline): $c\n"
		    if $c =~ /(?<!\\)%/;
		print "$ENV{FROM}: an agent step whose output cron would mail every time: $c\n"
		    if ($c =~ /PROMPT\.md|agent-step/ && $c !~ /\bchronic\s+cbexec|>>\s*\S+\s+2>&1/);
	' < "$f")
done
is "$bad" "" "crontab entries: cd first, no bare %, quiet agent steps"

if [ "$(id -u)" = 0 ] && command -v crontab >/dev/null 2>&1 &&
    id nobody >/dev/null 2>&1; then
	# nobody's crontab, kept and put back afterwards.
	if crontab -u nobody -l > saved.cron 2>/dev/null; then had=1; else had=; fi
	trap 'if [ -n "$had" ]; then crontab -u nobody saved.cron; else crontab -u nobody -r 2>/dev/null; fi; cd /; rm -rf "$SCRATCH" "$T_TMP"' EXIT
	for f in cron.[0-9]*; do
		case $f in *.from) continue ;; esac
		err=$(crontab -u nobody "$f" 2>&1)
		is "$?:$err" "0:" "crontab installs the entries of $(cat "$f.from")"
	done
	# The check is real: a continued line is refused.
	printf '*/10 * * * *  cbexec --name n \\\n    -- true\n' > cont.cron
	crontab -u nobody cont.cron 2>/dev/null
	ok "$([ $? -ne 0 ]; echo $?)" "crontab refuses a line continued with a backslash"
else
	skip "crontab(1) not installed (Debian package cron) or not root: the documented crontab entries are not installed"
fi

# --- The crontab.example step under chronic ----------------------------
# Run as cron would: its command line through sh, in a HOME with the
# project, a stand-in claude that prints a lot and succeeds or fails.
mkdir -p home/src/app fake
echo "make the tests pass" > home/src/app/PROMPT.md
cat > fake/claude <<'EOF'
#!/bin/sh
echo "agent chatter: $*"
echo "agent: more output"
echo x >> "$HOME/ran"
[ "$(cat "$HOME/outcome")" = ok ] && exit 0
echo "Error: the build failed" >&2
exit 1
EOF
chmod +x fake/claude
step=$(grep -E '^\*/10 .*PROMPT\.md' "$CT/crontab.example" | head -1 |
    sed -E 's/^([^ ]+ +){5}//')
cronrun() {	# cronrun OUTCOME: the step once; its output in cron.out
	echo "$1" > home/outcome
	env -i HOME="$SCRATCH/home" LOGNAME=nobody SHELL=/bin/sh \
	    PATH="$SCRATCH/fake:$SCRATCH/bin:/usr/bin:/bin" \
	    CBEXEC_STATE_DIR="$CBEXEC_STATE_DIR" sh -c "$step" > cron.out 2>&1
}
if [ -n "$step" ] && command -v chronic >/dev/null 2>&1; then
	cronrun ok
	is "$?:$(cat cron.out)" "0:" "crontab.example's step, a run that went well: nothing for cron to mail"
	ok "$(test -s home/ran; echo $?)" "... the agent did run"
	cronrun fail
	rc=$?
	like "$(cat cron.out)" "agent chatter" "a failed run: its output is mailed"
	ok "$([ "$rc" -ne 0 ]; echo $?)" "... (exit $rc)"
	cronrun fail
	like "$(cat cron.out)" "CIRCUIT_BREAKER_OPEN" "the run that opens the circuit: the OPEN block is mailed"
	runs=$(wc -l < home/ran)
	cronrun ok
	is "$?:$(cat cron.out)" "120:" "then every refused invocation: exit 120, nothing mailed"
	is "$(wc -l < home/ran)" "$runs" "... and the agent does not run"
else
	skip "chronic(1) not installed (Debian package moreutils): the crontab.example step is not run"
fi

# --- The Kubernetes CronJob: exec form, cbexec as PID 1 ----------------
# The container's command and args, parsed from the YAML (flow or block
# sequences of plain or quoted scalars), one per line in k8s.argv.
perl -e '
	my ($key, $ind, @argv);
	while (<>) {
		next if /^\s*#/ || /^\s*$/;
		if (/^(\s*)(command|args):\s*(.*?)\s*$/) {
			($key, $ind) = ($2, length $1);
			my $v = $3;
			if ($v =~ /^\[(.*)\]$/) {
				push @argv, map { s/^\s*"?|"?\s*$//gr } split /,/, $1;
				$key = undef;
			}
			next;
		}
		if (defined $key && /^(\s*)-\s+(.*?)\s*$/ && length($1) >= $ind) {
			my $v = $2;
			$v =~ s/^"(.*)"$/$1/ or $v =~ s/^\x27(.*)\x27$/$1/;
			push @argv, $v;
			next;
		}
		$key = undef;
	}
	print "$_\n" for @argv;
' "$CT/cbexec-k8s-cronjob.yaml" > k8s.argv
argv0=$(head -1 k8s.argv)
case $(basename "$argv0") in
cbexec) k8s_exec=0 ;;
sh|bash) grep -Eq '(^|[;&|[:space:]])exec +cbexec ' k8s.argv; k8s_exec=$? ;;
*) k8s_exec=1 ;;
esac
ok "$k8s_exec" "the CronJob runs cbexec itself (argv[0] $argv0), not behind a shell"
like "$(tr '\n' ' ' < k8s.argv)" '(^| )-- \./agent-step\.sh $' "... the step after --"
like "$(tr '\n' ' ' < k8s.argv)" ' --log - ' "... its JSON events to the container's stdout (--log -)"

if command -v unshare >/dev/null 2>&1 &&
    unshare --pid --fork true 2>/dev/null && [ -z "$UNDER_VALGRIND" ]; then
	mkdir -p pod
	cat > pod/agent-step.sh <<'EOF'
#!/bin/sh
echo started > started
exec sleep 30
EOF
	chmod +x pod/agent-step.sh
	# The container's argv with this tree's binary, as PID 1 of a new
	# PID namespace; CBEXEC_STORE unset (no Secret here): a local state.
	set -- $(sed '1d' k8s.argv)
	(cd pod && CBEXEC_STATE_DIR=$SCRATCH/pod/state exec unshare --pid \
	    --fork --kill-child "$CBEXEC" "$@") > pod.out 2> pod.err &
	us=$!
	poll_until 10 test -e pod/started
	pid1=$(cat "/proc/$us/task/$us/children" 2>/dev/null | awk '{print $1}')
	is "$(awk '/^NSpid:/ { print $NF }' "/proc/$pid1/status" 2>/dev/null)" 1 \
	    "cbexec runs as PID 1 of the pod"
	kill -TERM "$pid1"
	poll_until 10 dead "$us"
	ok $? "SIGTERM to PID 1 (the pod being stopped) reaches cbexec: it ends at once"
	wait "$us"
	is "$?" 122 "... stopping the step, exit 122 (interrupted)"
	name=$(awk '$0 == "--name" { getline; print; exit }' k8s.argv)
	is "$(jget "pod/state/$name.json" iteration)/$(jget "pod/state/$name.json" outcome)" 1/ABORT \
	    "... and the run is recorded"
	like "$(grep '^{"v":' pod.out | tail -1)" '"circuit":"'"$name"'","event":"run","iteration":1,' \
	    "... and its JSON event is on the container's stdout (--log -)"
	kill "$us" 2>/dev/null
else
	skip "unshare --pid not available (util-linux, root): the CronJob is not run as PID 1"
fi

# --- --on-run: pings and messages, against a local HTTP listener ----------
# README's healthchecks.io and ntfy hooks and contrib/on-run-ping.sh, as
# written but for the URL, talking to t/httplisten.pl on 127.0.0.1 with
# the real curl(1): a start and an end ping per run, the exit status in
# the end ping's path, an ntfy message for a failed run only.
if command -v curl >/dev/null 2>&1; then
	perl "$T_DIR/httplisten.pl" http.port http.log &
	httpd=$!
	poll_until 20 test -s http.port
	URL=http://127.0.0.1:$(cat http.port)
	mkdir -p hooks
	printf '#!/bin/sh\nexit "${STEP_EXIT:-0}"\n' > hooks/agent-step.sh
	chmod +x hooks/agent-step.sh
	# The README's block, one command a line, with the listener's URLs.
	perl -ne '
		$in = 1 if /^### Pings and messages around every run/;
		$in = 0 if $in && /^### / && !/^### Pings/;
		print if $in && /^(export |cbexec )/;
	' "$README" | sed -e "s|https://hc-ping.com/|$URL/hc/|" \
	    -e "s|https://ntfy.sh/|$URL/ntfy/|" > hooks.sh
	is "$(grep -c '^cbexec .*--on-run' hooks.sh)" 2 "README: the healthchecks.io and ntfy hooks"
	for step in 0 3; do
		(cd hooks && export CBEXEC_STATE_DIR=$SCRATCH/hooks/state STEP_EXIT=$step &&
		    PATH="$SCRATCH/bin:$PATH" sh "$SCRATCH/hooks.sh") >/dev/null 2>hooks.err
	done
	poll_until 10 test "$(wc -l < http.log)" -ge 5
	is "$(cut -f1 http.log | tr '\n' ' ')" \
	    "GET /hc/your-check-uuid/start POST /hc/your-check-uuid/0 GET /hc/your-check-uuid/start POST /hc/your-check-uuid/3 POST /ntfy/your-topic " \
	    "README: start and end pings (exit status 0, then 3), one ntfy message for the failure"
	like "$(grep /ntfy/ http.log)" 'Title: cbexec nightly: run 4 failed	recoverable unknown: exited with status 3$' \
	    "README: the ntfy message names the circuit and the run"
	is "$(grep -c 'warning' hooks.err)" 0 "... with no warning"

	# contrib/on-run-ping.sh: both, the circuit's state in the message.
	: > http.log
	for step in 0 3 3; do
		(cd hooks && CBEXEC_STATE_DIR=$SCRATCH/hooks/state STEP_EXIT=$step \
		    HC_PING_URL=$URL/hc/abc NTFY_URL=$URL/ntfy/t "$CBEXEC" -q --no-prompt \
		    --name ping --progress exit --no-progress-threshold 2 \
		    --on-run "$CT/on-run-ping.sh" -- ./agent-step.sh) >/dev/null 2>>ping.err
	done
	poll_until 10 test "$(wc -l < http.log)" -ge 8
	is "$(cut -f1 http.log | tr '\n' ' ')" \
	    "GET /hc/abc/start POST /hc/abc/0 GET /hc/abc/start POST /hc/abc/3 POST /ntfy/t GET /hc/abc/start POST /hc/abc/3 POST /ntfy/t " \
	    "on-run-ping.sh: start and end pings, an ntfy message per failed run"
	like "$(sed -n 2p http.log)" '	run 1: success \(success\) after [0-9.]+s$' \
	    "on-run-ping.sh: the end ping's body says how the run went"
	like "$(sed -n 8p http.log)" 'Title: cbexec ping: run 3 failure \(circuit OPEN\)	Priority: high	Tags: rotating_light	recoverable unknown, exit status 3 after' \
	    "on-run-ping.sh: the run that opened the circuit, at high priority"
	# A refused run: no ping at all.
	: > http.log
	(cd hooks && CBEXEC_STATE_DIR=$SCRATCH/hooks/state HC_PING_URL=$URL/hc/abc \
	    "$CBEXEC" -q --no-prompt --name ping --on-run "$CT/on-run-ping.sh" -- ./agent-step.sh)
	is "$?:$(wc -l < http.log | tr -d ' ')" "120:0" "a refused run pings nothing (the check goes late)"
	# A monitor that is down: the hook fails, the run does not.
	(cd hooks && CBEXEC_STATE_DIR=$SCRATCH/hooks/state HC_PING_URL=$URL/down/abc \
	    "$CBEXEC" --no-prompt --name down --on-run "$CT/on-run-ping.sh" -- ./agent-step.sh) \
	    >/dev/null 2>down.err
	is "$?" 0 "a ping that fails: the run's own status"
	like "$(cat down.err)" 'warning: on-run hook exited 1' "... and a warning"
	kill "$httpd" 2>/dev/null
	wait "$httpd" 2>/dev/null
else
	skip "curl not installed (Debian package curl): the ping recipes are not run"
fi

# --- the printed resets clear the alert ----------------------------------
# A cron line writes its textfile where node_exporter reads (tf/); each
# hint is taken from where cbexec (or the alert) prints it and run as it
# stands, in an operator's shell, with this tree's cbexec on PATH.
mkdir -p tf
textfile() { cat "tf/cbexec-$1.prom"; }
NE_PID=
if command -v prometheus-node-exporter >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
	ne_port=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1)->sockport')
	prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" \
	    --collector.disable-defaults --collector.textfile \
	    --collector.textfile.directory="$SCRATCH/tf" >ne.log 2>&1 &
	NE_PID=$!
	ne_up() { curl -fsS -m 2 "http://127.0.0.1:$ne_port/metrics" >/dev/null 2>&1; }
	poll_until 20 ne_up || { kill "$NE_PID" 2>/dev/null; wait "$NE_PID" 2>/dev/null; NE_PID=; }
fi
# served NAME OUT: what the exporter serves of circuit NAME (else the file).
served() {
	if [ -n "$NE_PID" ]; then
		curl -fsS -m 2 "http://127.0.0.1:$ne_port/metrics" |
		    grep -E "^cbexec_[a-z_]+\{circuit=\"$1\"" > "$2"
	else
		grep -v '^#' "tf/cbexec-$1.prom" > "$2"
	fi
}
if [ -n "$NE_PID" ]; then
	ok 0 "node_exporter serves the textfile directory on 127.0.0.1:$ne_port"
else
	skip "prometheus-node-exporter (or curl) not installed, or it did not answer: the textfiles are read directly"
fi
# alert_clears WHAT BEFORE AFTER: promtool's rule test on the two.
alert_clears() {
	if command -v promtool >/dev/null 2>&1; then
		out=$(perl "$T_DIR/alertclears.pl" test "$CT/prometheus-alerts.yml" "$2" "$3" 2>&1)
		rc=$?
		is "$rc" 0 "promtool test rules: CbexecCircuitOpen fires, then clears after $1"
		[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -30
	else
		skip "promtool not installed (Debian package prometheus): the alert rules are not run"
	fi
}
op() { (cd / && PATH="$SCRATCH/bin:$PATH" sh -c "$1") >/dev/null 2>&1; }
# The OPEN block's RESET line.
cbr() { "$CBEXEC" -q --no-prompt --progress exit --metrics "$SCRATCH/tf/cbexec-$1.prom" --name "$@"; }
cbr blk --max-consecutive-errors 1 -- false 2> blk.err
served blk blk.before
is "$(sed -n 's/^cbexec_state{[^}]*} //p' blk.before)" 2 "the run that opens the circuit: served OPEN"
hint=$(sed -n 's/^RESET: //p' blk.err)
is "$hint" "cbexec --reset-circuit --name blk" "the OPEN block's RESET line"
op "$hint"
served blk blk.after
is "$(sed -n 's/^cbexec_state{[^}]*} //p' blk.after)" 0 "... as printed (no --metrics): served CLOSED"
alert_clears "the OPEN block's RESET" blk.before blk.after
# --trip alone fires it; the alert's own annotation clears it.
cbr ann -- true
op "cbexec --trip --reason maintenance ann"
served ann ann.before
is "$(sed -n 's/^cbexec_state{[^}]*} //p' ann.before)" 2 "--trip alone: served OPEN"
hint=$(perl "$T_DIR/alertclears.pl" render "$CT/prometheus-alerts.yml" ann.before 2>/dev/null |
    sed -n 's/.*then `\([^`]*\)`.*/\1/p')
is "$hint" 'cbexec --reset-circuit --reason "..." ann' "the alert's annotation: its reset"
op "$hint"
served ann ann.after
is "$(sed -n 's/^cbexec_state{[^}]*} //p' ann.after)" 0 "... as printed: served CLOSED"
alert_clears "the trip and the annotation's reset" ann.before ann.after
# --status's reset line.
cbr st --max-consecutive-errors 1 -- false 2>/dev/null
served st st.before
hint=$("$CBEXEC" --status st | sed -n 's/^reset: *//p')
op "$hint"
served st st.after
is "$(sed -n 's/^cbexec_state{[^}]*} //p' st.after)" 0 "--status's reset as printed ($hint): served CLOSED"
alert_clears "--status's reset" st.before st.after
# README's, for its circuit nightly.
cbr nightly --max-consecutive-errors 1 -- false 2>/dev/null
served nightly nightly.before
hint=$(grep -m1 '^cbexec --reset-circuit --reason ' "$README" | sed 's/ *#.*//')
like "$hint" 'nightly$' "README's reset line ($hint)"
op "$hint"
served nightly nightly.after
is "$(sed -n 's/^cbexec_state{[^}]*} //p' nightly.after)" 0 "... as printed: served CLOSED"
alert_clears "README's reset" nightly.before nightly.after
if [ -n "$NE_PID" ]; then
	kill "$NE_PID" 2>/dev/null
	wait "$NE_PID" 2>/dev/null
fi

# --- systemd units -----------------------------------------------------
# Copies with this tree's binary in ExecStart, and the man page on
# MANPATH for Documentation=man:cbexec(1).
mkdir -p units man/man1
cp "$MAN" man/man1/cbexec.1
for u in cbexec-agent cbexec-shared; do
	sed "s|^ExecStart=cbexec |ExecStart=$CBEXEC |" "$CT/$u.service" > "units/$u.service"
	cp "$CT/$u.timer" units/
done
if command -v systemd-analyze >/dev/null 2>&1; then
	for u in cbexec-agent cbexec-shared; do
		err=$(MANPATH="$SCRATCH/man" systemd-analyze verify \
		    "units/$u.service" "units/$u.timer" 2>&1)
		is "$?:$err" "0:" "systemd-analyze verify $u.service $u.timer"
		out=$(systemd-analyze security --offline=true "units/$u.service" 2>&1 |
		    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
		if [ -n "$out" ]; then
			ok "$(awk -v e="$out" 'BEGIN { exit !(e <= 3.0) }'; echo $?)" \
			    "$u.service: systemd-analyze security exposure $out (at most 3.0)"
		else
			skip "systemd-analyze security --offline not available"
		fi
	done
else
	skip "systemd-analyze not installed (Debian package systemd): the units are not verified"
fi
# No %h (root's home in a system unit whatever User= says).
ok "$(grep -q '%h' "$CT/cbexec-agent.service" "$CT/cbexec-shared.service"; [ $? -ne 0 ]; echo $?)" \
    "the units use no %h"
for k in 'ProtectSystem=strict' 'ReadWritePaths=' 'NoNewPrivileges=yes' 'PrivateTmp=yes' 'ProtectHome='; do
	ok "$(grep -q "^$k" "$CT/cbexec-agent.service"; echo $?)" "cbexec-agent.service: $k"
done

# The unit's run, and the operator commands of its comment, in a copy of
# its world under $SCRATCH: the service's environment for the run, an
# operator's shell (no CBEXEC_STATE_DIR, another directory) for the rest.
unit=$CT/cbexec-agent.service
val() { sed -n "s/^$1=//p" "$unit" | head -1; }
root=$SCRATCH/sys
wd=$root$(val WorkingDirectory)
mkdir -p "$wd"
printf '#!/bin/sh\necho step; exit 1\n' > "$wd/agent-step.sh"
chmod +x "$wd/agent-step.sh"
envs=$(sed -n 's/^Environment=//p' "$unit" | sed "s|=/|=$root/|")
exe=$(awk '/^ExecStart=/ { s = $0; while (s ~ /\\$/) { getline l; s = substr(s, 1, length(s) - 1) " " l } sub(/^ExecStart=/, "", s); print s }' "$unit")
mkdir -p "$root/var/lib/cbexec" && chmod 0700 "$root/var/lib/cbexec"
(cd "$wd" && env -u CBEXEC_STATE_DIR $envs PATH="$SCRATCH/bin:$PATH" sh -c "$exe") >/dev/null 2>&1
is "$?" 1 "cbexec-agent.service's ExecStart, in its environment: the step's own status"
ops=$(awk '/^#   sudo -u agent / { s = $0; while (s ~ /\\$/) { getline l; sub(/^#/, "", l); s = substr(s, 1, length(s) - 1) " " l } sub(/^#   sudo -u agent +/, "", s); print s }' "$unit" |
    sed "s|=/|=$root/|g")
ok "$([ "$(printf '%s\n' "$ops" | grep -c .)" -ge 2 ]; echo $?)" "the unit's comment gives the operator commands"
printf '%s\n' "$ops" > ops.txt
while IFS= read -r cmd; do
	out=$(cd / && env -u CBEXEC_STATE_DIR PATH="$SCRATCH/bin:$PATH" sh -c "$cmd" 2>&1)
	rc=$?
	ok "$([ "$rc" -ne 125 ] && ! printf '%s' "$out" | grep -q 'no such circuit'; echo $?)" \
	    "from an operator's shell: $cmd (exit $rc)"
done < ops.txt
done_testing
