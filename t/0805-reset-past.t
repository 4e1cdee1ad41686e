#!/bin/sh
# SPDX-License-Identifier: ISC
# A reset time already past is no reset time (SPEC §11): a client that
# reports a usage limit whose stated reset has gone by (Claude Code says
# its limits are still in force after it) gets the wait a limit without
# a time gets -- --cooldown or 5 minutes, doubling -- and --loop never
# asks again at once.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }

mkdir -p bin
# A Claude Code stand-in at its usage limit, its structured resetsAt a
# minute ago; each call is counted.
cat >bin/claude <<'EOF'
#!/bin/sh
echo x >>"$CALLS"
printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour"}}\n' "$RESET"
printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You'"'"'ve hit your 5-hour limit","session_id":"s"}\n'
exit 1
EOF
chmod +x bin/claude
PATH=$SCRATCH/bin:$PATH
export CALLS=$SCRATCH/calls

RESET=$(( $(date +%s) - 60 )) cb -q --loop --budget 3s --name past -- \
    claude -p x >/dev/null 2>err
is "$?" 120 "a reset time a minute ago: the circuit opens, 120"
is "$(wc -l <"$CALLS" | tr -d ' ')" 1 "--loop asked the provider once, not again at once"
is "$(st past state)" OPEN "... the circuit is OPEN"
# retry_at: 5 minutes from the run, not the past reset time
at=$(perl -MTime::Local -e '
	$ARGV[0] =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ or exit 1;
	print timegm($6, $5, $4, $3, $2 - 1, $1) - time' "$(st past retry_at)")
ok "$([ "$at" -ge 280 ] && [ "$at" -le 300 ]; echo $?)" \
    "... until 5 minutes from now (retry in ${at}s), as without a reset time"
like "$(st past open_reason)" "^usage limit until [0-9:]+ UTC" "... and says until when"

# With --cooldown, that is the wait.
RESET=$(( $(date +%s) - 60 )) cb -q --cooldown 40s --name cool -- \
    claude -p x >/dev/null 2>&1
at=$(perl -MTime::Local -e '
	$ARGV[0] =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ or exit 1;
	print timegm($6, $5, $4, $3, $2 - 1, $1) - time' "$(st cool retry_at)")
ok "$([ "$at" -ge 30 ] && [ "$at" -le 40 ]; echo $?)" \
    "--cooldown 40s: the wait is the cooldown (retry in ${at}s)"
done_testing
