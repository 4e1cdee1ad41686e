/*
 * Options (SPEC §1).  Every option is one row of opts[]: its long name, its
 * short letter, whether it takes a value, and the id set_option()
 * (setopt.c) switches on.  argv, the CB_* environment and the config file
 * all go through set_option(), so a value is validated the same way
 * wherever it comes from; o->origin[id] remembers the source so that a
 * lower-precedence source (CLI > env > config > phase > built-in) never
 * overrides a higher.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "optvalues.h"

static const struct opt opts[] = {
	{ "state", required_argument, 's', O_STATE },
	{ "name", required_argument, 'N', O_NAME },
	{ "chdir", required_argument, 'C', O_CHDIR },
	{ "follow-symlinks", no_argument, 0, O_FOLLOW },
	{ "status", no_argument, 0, O_STATUS },
	{ "reset-circuit", no_argument, 0, O_RESET },
	{ "history", no_argument, 0, O_HISTORY },
	{ "trip", no_argument, 0, O_TRIP },
	{ "json", no_argument, 0, O_JSON },
	{ "last", required_argument, 0, O_LAST },
	{ "reason", required_argument, 0, O_REASON },
	{ "help", no_argument, 'h', O_HELP },
	{ "version", no_argument, 'V', O_VERSION },
	{ "phase", required_argument, 'p', O_PHASE },
	{ "timeout", required_argument, 't', O_TIMEOUT },
	{ "kill-after", required_argument, 'k', O_KILL_AFTER },
	{ "signal", required_argument, 0, O_SIGNAL },
	{ "budget", required_argument, 'T', O_BUDGET },
	{ "iterations", required_argument, 'n', O_ITERATIONS },
	{ "loop", no_argument, 'l', O_LOOP },
	{ "until-success", no_argument, 0, O_UNTIL_SUCCESS },
	{ "delay", required_argument, 0, O_DELAY },
	{ "task", required_argument, 0, O_TASK },
	{ "backoff", required_argument, 0, O_BACKOFF },
	{ "config", required_argument, 'c', O_CONFIG },
	{ "no-prompt", no_argument, 0, O_NO_PROMPT },
	{ "quiet", no_argument, 'q', O_QUIET },
	{ "verbose", no_argument, 'v', O_VERBOSE },
	{ "log", required_argument, 0, O_LOG },
	{ "metrics", required_argument, 0, O_METRICS },
	{ "wait-lock", optional_argument, 0, O_WAIT_LOCK },
	{ "on-state-change", required_argument, 0, O_ON_CHANGE },
	{ "ok-exit-codes", required_argument, 0, O_OK_CODES },
	{ "ignore-exit-codes", required_argument, 0, O_IGNORE_CODES },
	{ "no-progress-threshold", required_argument, 0, O_NO_PROGRESS },
	{ "same-error-threshold", required_argument, 0, O_SAME_ERROR },
	{ "half-open-after", required_argument, 0, O_HALF_OPEN_AFTER },
	{ "max-consecutive-errors", required_argument, 0, O_MAX_CONSEC },
	{ "max-retries", required_argument, 0, O_MAX_RETRIES },
	{ "cooldown", required_argument, 0, O_COOLDOWN },
	{ "half-open-trials", required_argument, 0, O_HALF_OPEN_TRIALS },
	{ "history-size", required_argument, 0, O_HISTORY_SIZE },
	{ "progress", required_argument, 0, O_PROGRESS },
	{ "progress-cmd", required_argument, 0, O_PROGRESS_CMD },
	{ "watch", required_argument, 0, O_WATCH },
	{ "exclude", required_argument, 0, O_EXCLUDE },
	{ "capture-bytes", required_argument, 0, O_CAPTURE_BYTES },
	{ "no-capture-stdout", no_argument, 0, O_NO_CAPTURE_STDOUT },
	{ "keep-orphans", no_argument, 0, O_KEEP_ORPHANS },
	{ "exit-codes", required_argument, 0, O_EXIT_CODES },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static int
apply(struct options *o, const struct opt *op, const char *v,
    enum origin from, char *err, size_t len)
{
	int rc;

	if (o->origin[op->id] > from)
		return 0;
	if ((rc = set_option(o, op, v, err, len)) == -1 && err[0] == '\0')
		errf(err, len, "out of memory");
	if (rc == 0)
		o->origin[op->id] = (unsigned char)from;
	return rc;
}

/* What getopt_long refused in ARG ("--name[=value]"): an option given a
 * value it takes none of, an abbreviation of several, or none at all. */
static int
long_option_error(const char *arg, char *err, size_t len)
{
	const char *name = arg + 2, *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - name) : strlen(name), i, hits = 0;
	char list[160] = "";
	const struct opt *hit = NULL;

	if (strncmp(arg, "--", 2) != 0 || n == 0)
		return errf(err, len, "unknown option '%s'", arg);
	for (i = 0; i < NOPTS; i++) {
		if (strncmp(opts[i].name, name, n) != 0)
			continue;
		if (opts[i].name[n] == '\0') {	/* exact */
			hit = &opts[i];
			hits = 1;
			break;
		}
		hit = &opts[i];
		if (hits++ < 4)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
			    "%s--%s", hits > 1 ? ", " : "", opts[i].name);
	}
	if (hits > 1)
		return errf(err, len, "ambiguous option '--%.*s' (%s%s)",
		    (int)n, name, list, hits > 4 ? ", ..." : "");
	if (hits == 1 && eq != NULL && hit->has_arg == no_argument)
		return errf(err, len, "option '--%s' takes no value", hit->name);
	return errf(err, len, "unknown option '%s'", arg);
}

int
cli_parse(struct options *o, int argc, char **argv, char *err, size_t len)
{
	struct option lopts[NOPTS + 1];
	char shorts[3 * NOPTS + 2], *sp = shorts;
	const struct opt *op;
	size_t i;
	int c, idx, n_cmd;

	err[0] = '\0';
	/* '+': stop at the first non-option, so COMMAND's own options are
	 * never parsed as ours; ':': report missing arguments ourselves. */
	*sp++ = '+';
	*sp++ = ':';
	for (i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].has_arg;
		lopts[i].flag = NULL;
		lopts[i].val = 256 + (int)i;
		if (opts[i].letter != 0) {
			*sp++ = (char)opts[i].letter;
			if (opts[i].has_arg == required_argument)
				*sp++ = ':';
		}
	}
	*sp = '\0';
	memset(&lopts[NOPTS], 0, sizeof(lopts[NOPTS]));

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		if (c == '?') {
			if (optopt != 0 && optopt < 256)
				return errf(err, len, "unknown option '-%c'",
				    optopt);
			return long_option_error(argv[optind - 1], err, len);
		}
		if (c == ':') {
			if (optopt != 0 && optopt < 256)
				return errf(err, len, "option '-%c' needs a "
				    "value", optopt);
			return errf(err, len, "option '%s' needs a value",
			    argv[optind - 1]);
		}
		if (c >= 256)
			op = &opts[c - 256];
		else {
			for (op = opts; op->letter != c; op++)
				;
		}
		if (op->has_arg == no_argument && optarg != NULL)
			return errf(err, len, "option --%s takes no value",
			    op->name);
		if (apply(o, op, optarg, FROM_CLI, err, len) == -1)
			return -1;
	}
	n_cmd = argc - optind;
	if (o->mode == MODE_RUN) {
		if (n_cmd == 0)
			return errf(err, len, "no COMMAND given");
		o->argv = argv + optind;
		return 0;
	}
	if (o->mode == MODE_HELP || o->mode == MODE_VERSION)
		return 0;
	/* Operator commands take at most one CIRCUIT: a path or a name. */
	if (n_cmd > 1)
		return errf(err, len, "too many arguments: '%s'",
		    argv[optind + 1]);
	if (n_cmd == 1) {
		const char *a = argv[optind];
		size_t al = strlen(a);

		if (o->state_path != NULL || o->name != NULL)
			return errf(err, len, "CIRCUIT '%s' given as well as "
			    "--state or --name", a);
		if (strchr(a, '/') != NULL ||
		    (al > 5 && strcmp(a + al - 5, ".json") == 0))
			return replace_str(&o->state_path, a);
		if (!valid_name(a))
			return errf(err, len, "invalid CIRCUIT '%s' (a name of "
			    "letters, digits, '.', '_', '-', not starting with "
			    "'.'; or a path with '/' or ending in .json)", a);
		for (op = opts; op->id != O_NAME; op++)
			;
		return apply(o, op, a, FROM_CLI, err, len);
	}
	return 0;
}

static const struct opt *
find_key(const char *key)
{
	char name[64];
	size_t i;

	if (strlen(key) >= sizeof(name))
		return NULL;
	for (i = 0; key[i] != '\0'; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	name[i] = '\0';
	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

int
cli_apply(struct options *o, const char *key, const char *value,
    enum origin from, char *err, size_t len)
{
	const struct opt *op = find_key(key);

	err[0] = '\0';
	if (op == NULL)
		return 1;
	if (from == FROM_CONFIG && cli_config_refuses(key, err, len) == -1)
		return -1;
	return apply(o, op, value, from, err, len);
}

int
cli_config_refuses(const char *key, char *err, size_t len)
{
	const struct opt *op = find_key(key);

	if (op == NULL || !NOT_IN_CONFIG(op->id))
		return 0;
	return errf(err, len, "cannot be set in a config file (give it on "
	    "the command line)");
}

int
cli_is_list(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && (op->id == O_WATCH || op->id == O_EXCLUDE);
}

int
cli_is_flag(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && op->has_arg == no_argument;
}

int
cli_env(struct options *o, char *err, size_t len)
{
	static const struct { const char *env, *key; } envs[] = {
		{ "CB_NO_PROGRESS_THRESHOLD", "no-progress-threshold" },
		{ "CB_SAME_ERROR_THRESHOLD", "same-error-threshold" },
		{ "CB_HALF_OPEN_RETRIES", "half-open-after" },
		{ "CB_MAX_CONSECUTIVE_ERRORS", "max-consecutive-errors" },
		{ "CB_MAX_RETRIES", "max-retries" },
		{ "CB_COOLDOWN", "cooldown" },
	};
	char sub[256];
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		if ((v = getenv(envs[i].env)) == NULL)
			continue;
		if (cli_apply(o, envs[i].key, v, FROM_ENV, sub,
		    sizeof(sub)) != 0)
			return errf(err, len, "invalid environment %s='%s': "
			    "%s", envs[i].env, v, sub);
	}
	return 0;
}

