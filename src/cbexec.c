/* SPDX-License-Identifier: ISC */
/*
 * cbexec: run a command under a timeout, a budget and a persistent
 * circuit breaker.  main() parses the options, settles their precedence
 * (command line > environment > config file > phase > built-in), picks
 * the circuit, dispatches to the run loop or an operator command, and
 * turns the result into the exit status, remapped by --exit-codes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core.h"
#include "driver.h"

#define CBEXEC_VERSION "0.2.0"

static void
usage(FILE *f)
{
	fputs(
"usage: cbexec [OPTIONS] [--] COMMAND [ARG...]   run COMMAND under the breaker\n"
"       cbexec --status [--json] [CIRCUIT]        show a circuit (no lock)\n"
"       cbexec --status --all [--json]            one line per circuit\n"
"       cbexec --reset-circuit [--reason TEXT] [CIRCUIT]\n"
"       cbexec --history [--json] [--last N] [CIRCUIT]\n"
"       cbexec --trip [--create] [--reason TEXT] [CIRCUIT]  open it by hand\n"
"       cbexec --skip [--phase P | --task T] [--reason TEXT] [CIRCUIT]\n"
"       cbexec --unskip P|T [CIRCUIT]\n"
"       cbexec --record [--exit N] [--message TEXT | --stderr-file F]\n"
"              [--stdout-file F] [--progress yes|no|auto] [--task T]\n"
"              [--phase P] [CIRCUIT]            apply a run's result\n"
"       cbexec --allow-config [FILE]              approve a work tree's config\n"
"       cbexec --reset-account NAME [--reason TEXT]  clear an account's gate\n"
"       cbexec --help | --version\n"
"\n"
"Which circuit (CIRCUIT is a NAME, or a path with '/' or ending in .json):\n"
"      --state FILE          the state file itself\n"
"  -N, --name NAME           $CBEXEC_STATE_DIR/NAME.json, default dir\n"
"                            ${XDG_STATE_HOME:-$HOME/.local/state}/cbexec\n"
"                            (neither: $CBEXEC_STATE, else the directory's\n"
"                            own, $CBEXEC_STATE_DIR/dir-BASE-HASH.json)\n"
"  -C, --chdir DIR           change to DIR first; relative paths are in DIR\n"
"      --follow-symlinks     accept a symlinked state, --log or --metrics file\n"
"\n"
"Running (durations: N, N.N or .N with ms, s, m, h or d; 0 = no limit):\n"
"  -p, --phase P             RED, GREEN, REFACTOR, DOCUMENT or a config phase\n"
"  -t, --timeout D           limit for one run (120s)\n"
"      --idle-timeout D      stop a run that writes nothing (no agent event)\n"
"                            for D, as on --timeout (0 = none)\n"
"  -k, --kill-after D        SIGKILL this long after the timeout signal (10s)\n"
"  -s, --signal SIG          signal sent on timeout: name or number, 0 = none\n"
"  -T, --budget D            total time for this invocation (30m)\n"
"  -n, --iterations N        at most N runs (1)\n"
"  -l, --loop                run until done, tripped, or the budget is spent\n"
"      --until-success       with --loop/-n: stop after the first success\n"
"      --delay D             pause between runs (0)\n"
"      --backoff D[:MAX]     after a failure wait D, doubling to MAX (10xD)\n"
"      --task ID             the task the run works on (STUCK rule)\n"
"  -c, --config FILE         JSON config (default: ~/.config/cbexec/config.json,\n"
"                            then .cbexec/config.json if approved with\n"
"                            --allow-config: the command can write it)\n"
"      --no-prompt           never show the menu when the circuit opens\n"
"  -q, --quiet / -v, --verbose  (-q: not even the refusal of an OPEN\n"
"                            circuit; -qq: nothing on stderr but errors)\n"
"      --log FILE            append JSON Lines events\n"
"      --metrics FILE        rewrite a Prometheus textfile after each run\n"
"      --wait-lock[=D]       wait for the lock instead of exiting BUSY (D after\n"
"                            '=': --wait-lock=30s)\n"
"      --on-state-change CMD run /bin/sh -c CMD after every transition\n"
"      --ok-exit-codes LIST  exit codes that count as success (0)\n"
"      --ignore-exit-codes LIST  exit codes that count as nothing\n"
"      --progress LIST       git,files,status,cmd,exit,auto (auto)\n"
"      --progress-cmd CMD    prints key=value lines or one number\n"
"      --watch DIR           directory for --progress files (repeatable)\n"
"      --exclude GLOB        left out of --progress files (repeatable)\n"
"      --capture-bytes N     tail kept of stdout and stderr (64k)\n"
"      --no-capture-stdout   the command writes straight to our stdout\n"
"      --keep-orphans        leave processes the command left behind\n"
"      --exit-codes open=N,stuck=N,abort=N,busy=N  remap 120-123\n"
"      --agent NAME          the AI client COMMAND runs: claude, codex, gemini,\n"
"                            qwen, opencode, or none (default: from COMMAND)\n"
"      --account NAME        the provider account COMMAND uses ($CBEXEC_ACCOUNT):\n"
"                            a usage limit, billing or auth failure any circuit\n"
"                            on it meets refuses every circuit on it (120) until\n"
"                            the reset time (then one trial) or --reset-account\n"
"\n"
"Spend of a known agent, from its output (0 = no cap; the run is stopped\n"
"as on --timeout, class budget, exit 124; a figure only its result gives\n"
"applies then, and no further run starts):\n"
"      --max-cost USD[/D]    cost of one run; USD/D: of the circuit's runs\n"
"                            in a rolling window of D (5,20/24h: both)\n"
"      --max-tokens N[/D]    tokens of one run (input, output and cached);\n"
"                            N/D: of the circuit's runs in a window of D\n"
"      --max-turns N         turns of one run\n"
"      --max-repeat-calls N  stop a run making the same tool call N times in\n"
"                            a row (5; 0 = off): recoverable loop, exit 124\n"
"\n"
"A circuit shared by many hosts (needs --name; env CBEXEC_STORE, config store):\n"
"      --store URL           keep it in Redis: redis://[user:password@]host[:port]\n"
"                            [/db] or unix:///path.sock[?db=N]; the lock is a\n"
"                            lease, every write fenced (a holder that lost its\n"
"                            lease is refused: 125); time from the store\n"
"      --store-lease D       the lease, renewed while the run goes on (30s)\n"
"      --store-timeout D     bound on connecting and on each command (2s); an\n"
"                            unreachable store is 125, COMMAND not started\n"
"      --store-fallback local  run on the local state file when the store\n"
"                            cannot be reached (said in the log and metrics)\n"
"\n"
"Breaker thresholds (option > environment > config > phase > built-in):\n"
"      --no-progress-threshold N   CB_NO_PROGRESS_THRESHOLD   (phase, else 3)\n"
"      --same-error-threshold N    CB_SAME_ERROR_THRESHOLD    (phase, else 5)\n"
"      --half-open-after N         CB_HALF_OPEN_RETRIES       (2)\n"
"      --max-consecutive-errors N  CB_MAX_CONSECUTIVE_ERRORS  (5)\n"
"      --max-retries N             CB_MAX_RETRIES             (3)\n"
"      --cooldown D                CB_COOLDOWN                (0 = operator)\n"
"      --half-open-trials N        (1)\n"
"      --history-size N            (100)\n"
"\n"
"Operator commands (a CIRCUIT without a state file: \"no such circuit\", 125):\n"
"      --status   --json   --history   --last N   --reset-circuit   --trip\n"
"      --reason TEXT\n"
"      --allow-config [FILE] approve FILE's content (.cbexec/config.json) as\n"
"                            the work tree's config; a changed one is refused\n"
"      --skip                give up --phase P or --task T (default: the task\n"
"                            the circuit is stuck on, else its phase): runs\n"
"                            for it exit 0 unstarted; the circuit CLOSES\n"
"      --unskip P|T          run that phase or task again (a reset does too)\n"
"      --create              with --trip: open a circuit that has not run yet\n"
"      --all                 with --status: every circuit of the state dir\n"
"                            (with --store: of the store)\n"
"      --reset-account NAME  close account NAME's gate (no such account: 125)\n"
"\n"
"Recording a run a loop script made itself (prints nothing; -v to speak):\n"
"      --record              apply one run's result as a run would\n"
"      --exit N              its exit status (0)\n"
"      --message TEXT        its stderr (or --stderr-file F: the file's tail)\n"
"      --stdout-file F       its stdout: the tail, and the status block\n"
"      --progress yes|no|auto  whether it made progress (auto: judge it)\n"
"\n"
"Exit status:\n"
"  0        the last run succeeded or reported completion, the phase or task\n"
"           was skipped (not run), or Skip was chosen; --status: not OPEN\n"
"           (--status --all: none is OPEN)\n"
"  1-119    the command's own exit status\n"
"  120      OPEN: the circuit is open (refused, or opened now; a usage limit\n"
"           or a spend window over its cap holds it until it frees up), or\n"
"           its --account's gate refused the run (--status: either refuses\n"
"           runs)\n"
"  121      STUCK: the same error or the same task failed repeatedly\n"
"  122      ABORT: fatal error class, or interrupted by the operator\n"
"  123      BUSY: another cbexec holds this circuit\n"
"  124      TIMEOUT: --timeout, --idle-timeout or --budget ran out, a per-run\n"
"           spend cap was crossed (outcome BUDGET), or a tool-call loop\n"
"           was stopped\n"
"  125      ERROR: cbexec itself failed (usage, config, state, no such\n"
"           circuit, I/O, a write error on stdout)\n"
"  126      COMMAND found but not executable\n"
"  127      COMMAND not found\n"
"  128+N    the command was killed by signal N\n"
"\n"
"See cbexec(1).\n", f);
}

static int
remap(const struct options *o, int code)
{
	switch (code) {
	case CB_EXIT_OPEN:
		return o->exit_open;
	case CB_EXIT_STUCK:
		return o->exit_stuck;
	case CB_EXIT_ABORT:
		return o->exit_abort;
	case CB_EXIT_BUSY:
		return o->exit_busy;
	default:
		return code;
	}
}

/* "cbexec: MSG" on one line whatever the message quotes (a value from
 * argv, the environment or a config file): control bytes are escaped. */
static int
error_line(const char *msg)
{
	fputs("cbexec: ", stderr);
	text_put(stderr, msg);
	putc('\n', stderr);
	return CB_EXIT_ERROR;
}

static int
usage_error(const char *msg)
{
	error_line(msg);
	fputs("Try 'cbexec --help' for more information.\n", stderr);
	return CB_EXIT_ERROR;
}

/*
 * What was printed on stdout must have reached it (GNU's close_stdout):
 * "--help >/dev/full" or "--status >&-" say so and exit 125.  main() sets
 * errno to 0 before the printing, so a write that failed on the way (the
 * stream then only has its error flag) has left its errno behind.
 */
static int
flush_stdout(int rc)
{
	if (fflush(stdout) != EOF && !ferror(stdout))
		return rc;
	if (errno != 0)
		fprintf(stderr, "cbexec: write error: %s\n", strerror(errno));
	else
		fputs("cbexec: write error\n", stderr);
	return CB_EXIT_ERROR;
}

int
main(int argc, char **argv)
{
	struct options o;
	struct circuit c;
	char err[1024];
	int rc;

	file_std_fds();
	options_init(&o);
	if (cli_parse(&o, argc, argv, err, sizeof(err)) == -1) {
		rc = usage_error(err);
		goto out;
	}
	errno = 0;
	if (o.mode == MODE_HELP) {
		usage(stdout);
		rc = flush_stdout(CB_EXIT_OK);
		goto out;
	}
	if (o.mode == MODE_VERSION) {
		printf("cbexec %s\n"
		    "Copyright (C) 2026 the cbexec authors.\n"
		    "License ISC: <https://opensource.org/license/isc-license-txt>.\n"
		    "This is free software: you are free to change and "
		    "redistribute it.\n"
		    "There is NO WARRANTY, to the extent permitted by law.\n",
		    CBEXEC_VERSION);
		rc = flush_stdout(CB_EXIT_OK);
		goto out;
	}
	if (o.chdir != NULL && chdir(o.chdir) == -1) {
		fprintf(stderr, "cbexec: -C %s: %s\n", o.chdir, strerror(errno));
		rc = CB_EXIT_ERROR;
		goto out;
	}
	if (o.mode == MODE_ALLOW_CONFIG) {
		rc = config_allow(&o);
		goto out;
	}
	if (cli_env(&o, err, sizeof(err)) == -1) {
		rc = error_line(err);
		goto out;
	}
	if ((o.config_path != NULL ? config_load(&o, o.config_path, 1, err,
	    sizeof(err)) : config_implicit(&o, err, sizeof(err))) == -1) {
		rc = error_line(err);
		goto out;
	}
	if (cli_finish(&o, err, sizeof(err)) == -1) {
		rc = usage_error(err);
		goto out;
	}
	if (o.mode == MODE_RESET_ACCOUNT) {
		rc = ops_reset_account(&o);
		goto out;
	}
	if (o.all) {
		errno = 0;
		rc = remap(&o, flush_stdout(ops_status_all(&o)));
		goto out;
	}
	if (circuit_resolve(&o, &c, err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		rc = CB_EXIT_ERROR;
		goto out;
	}
	errno = 0;
	switch (o.mode) {
	case MODE_STATUS:
		rc = flush_stdout(ops_status(&o, &c));
		break;
	case MODE_HISTORY:
		rc = flush_stdout(ops_history(&o, &c));
		break;
	case MODE_RESET:
		rc = ops_reset(&o, &c);
		break;
	case MODE_TRIP:
		rc = ops_trip(&o, &c);
		break;
	case MODE_SKIP:
		rc = ops_skip(&o, &c);
		break;
	case MODE_UNSKIP:
		rc = ops_unskip(&o, &c);
		break;
	case MODE_RECORD:
		rc = driver_record(&o, &c);
		break;
	default:
		rc = driver_run(&o, &c);
		break;
	}
	circuit_free(&c);
	rc = remap(&o, rc);
out:
	options_free(&o);
	return rc;
}
