/* SPDX-License-Identifier: ISC */
/*
 * Option precedence (SPEC §1): command line > environment > config file >
 * phase table > built-in, through the one option table.
 */
#include <stdlib.h>

#include "cli.h"
#include "tap.h"

static void
fresh(struct options *o, char **argv, int argc)
{
	char err[256];

	options_init(o);
	if (cli_parse(o, argc, argv, err, sizeof(err)) == -1)
		printf("# parse: %s\n", err);
}

int
main(void)
{
	char *argv[] = { "cbexec", "--no-progress-threshold", "7", "--", "true",
	    NULL };
	char *bare[] = { "cbexec", "true", NULL };
	char *green[] = { "cbexec", "--phase", "green", "true", NULL };
	struct options o;
	char err[256];

	/* Built-in. */
	unsetenv("CB_NO_PROGRESS_THRESHOLD");
	fresh(&o, bare, 2);
	is_int(cli_finish(&o, err, sizeof(err)), 0, "finish");
	is_int(o.limits.no_progress, 3, "built-in no-progress 3");
	is_int(o.limits.same_error, 5, "built-in same-error 5");
	is_int(o.limits.half_open_after, 2, "built-in half-open-after 2");
	ok(o.timeout == 120 && o.budget == 1800, "built-in timeout and budget");
	options_free(&o);

	/* Phase over built-in. */
	fresh(&o, green, 4);
	is_int(cli_finish(&o, err, sizeof(err)), 0, "finish GREEN");
	is_int(o.limits.no_progress, 2, "GREEN no-progress 2");
	is_int(o.limits.same_error, 3, "GREEN same-error 3");
	is_str(o.phase, "GREEN", "phase canonical spelling");
	options_free(&o);

	/* Config over phase. */
	fresh(&o, green, 4);
	is_int(cli_apply(&o, "no_progress_threshold", "4", FROM_CONFIG, err,
	    sizeof(err)), 0, "config value applied");
	cli_finish(&o, err, sizeof(err));
	is_int(o.limits.no_progress, 4, "config beats phase");
	options_free(&o);

	/* Environment over config, whichever is applied first. */
	fresh(&o, bare, 2);
	setenv("CB_NO_PROGRESS_THRESHOLD", "6", 1);
	is_int(cli_env(&o, err, sizeof(err)), 0, "env read");
	cli_apply(&o, "no_progress_threshold", "4", FROM_CONFIG, err,
	    sizeof(err));
	cli_finish(&o, err, sizeof(err));
	is_int(o.limits.no_progress, 6, "env beats config");
	options_free(&o);

	/* Command line over environment. */
	fresh(&o, argv, 5);
	cli_env(&o, err, sizeof(err));
	cli_finish(&o, err, sizeof(err));
	is_int(o.limits.no_progress, 7, "CLI beats env");
	options_free(&o);

	/* Invalid environment values are errors, not defaults. */
	fresh(&o, bare, 2);
	setenv("CB_NO_PROGRESS_THRESHOLD", "-1", 1);
	is_int(cli_env(&o, err, sizeof(err)), -1, "negative env: error");
	ok(strstr(err, "CB_NO_PROGRESS_THRESHOLD") != NULL,
	    "the message names the variable");
	options_free(&o);
	setenv("CB_NO_PROGRESS_THRESHOLD", "3x", 1);
	fresh(&o, bare, 2);
	is_int(cli_env(&o, err, sizeof(err)), -1, "junk env: error");
	options_free(&o);
	unsetenv("CB_NO_PROGRESS_THRESHOLD");
	setenv("CB_COOLDOWN", "5m", 1);
	fresh(&o, bare, 2);
	is_int(cli_env(&o, err, sizeof(err)), 0, "CB_COOLDOWN duration");
	ok(o.limits.cooldown == 300, "CB_COOLDOWN 5m = 300 s");
	options_free(&o);
	unsetenv("CB_COOLDOWN");

	/* Unknown config keys are reported as such. */
	fresh(&o, bare, 2);
	is_int(cli_apply(&o, "no_such_key", "1", FROM_CONFIG, err,
	    sizeof(err)), 1, "unknown key: 1");
	is_int(cli_apply(&o, "state", "x.json", FROM_CONFIG, err,
	    sizeof(err)), -1, "state is not a config key: refused");
	ok(strstr(err, "cannot be set in a config file") != NULL,
	    "state is not a config key: says why");
	options_free(&o);

	/* Signals. */
	is_int(signal_parse("TERM"), 15, "TERM");
	is_int(signal_parse("sigkill"), 9, "sigkill");
	is_int(signal_parse("0"), 0, "0");
	is_int(signal_parse("FOO"), -1, "FOO");
	is_int(signal_parse("-1"), -1, "-1");
	return done_testing();
}
