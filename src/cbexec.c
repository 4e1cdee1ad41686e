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
	char err[CB_ERRLEN];
	int rc;

	file_std_fds();
	if (stack_room(err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		return CB_EXIT_ERROR;
	}
	options_init(&o);
	if (cli_parse(&o, argc, argv, err, sizeof(err)) == -1) {
		rc = usage_error(err);
		goto out;
	}
	cli_wipe_secrets(argc, argv, o.argv);
	errno = 0;
	if (o.mode == MODE_HELP) {
		cli_help(stdout, o.help_topic);
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
		rc = exit_remap(o.exit_as, flush_stdout(ops_status_all(&o)));
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
	rc = exit_remap(o.exit_as, rc);
	/* --record --json: what it decided, with the status it exits with. */
	if (o.mode == MODE_RECORD && o.json) {
		driver_record_json(stdout, rc);
		rc = flush_stdout(rc);
	}
out:
	options_free(&o);
	return rc;
}
