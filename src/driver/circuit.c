/* SPDX-License-Identifier: ISC */
/*
 * Which circuit an invocation means (SPEC §1): --state or CBEXEC_STATE,
 * else --name in the state directory, else the working directory's; how
 * people should name it in messages and the command that resets it; and
 * the reporter that speaks for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"

static const char *
env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

char *
circuit_state_dir(char *err, size_t len)
{
	const char *dir = env_nonempty("CBEXEC_STATE_DIR");
	char *p;

	p = dir != NULL ? strdup(dir) :
	    xdg_dir("XDG_STATE_HOME", ".local/state", "cbexec");
	if (p == NULL)
		snprintf(err, len, "no state directory: neither "
		    "CBEXEC_STATE_DIR, XDG_STATE_HOME (an absolute path) nor "
		    "HOME is set");
	return p;
}

int
circuit_resolve(const struct options *o, struct circuit *c, char *err,
    size_t len)
{
	const char *env_state = env_nonempty("CBEXEC_STATE");
	char *dir, cflag[4200] = "";
	int r = 0;

	memset(c, 0, sizeof(*c));
	if (o->chdir != NULL)
		snprintf(cflag, sizeof(cflag), "-C %s ", o->chdir);
	if (o->state_path != NULL || (o->name == NULL && env_state != NULL)) {
		const char *p = o->state_path ? o->state_path : env_state;

		c->path = strdup(p);
		c->label = strdup(p);
		r = asprintf(&c->reset_hint, "cbexec %s--reset-circuit "
		    "--state %s", p[0] == '/' ? "" : cflag, p);
	} else if (o->name != NULL) {
		if ((dir = circuit_state_dir(err, len)) == NULL)
			return -1;
		r = asprintf(&c->path, "%s/%s.json", dir, o->name);
		free(dir);
		if (r != -1)
			r = asprintf(&c->reset_hint, "cbexec --reset-circuit "
			    "--name %s", o->name);
		c->label = strdup(o->name);
	} else {
		c->path = strdup(".cbexec/state.json");
		c->label = strdup(".cbexec/state.json");
		r = asprintf(&c->reset_hint, "cbexec %s--reset-circuit",
		    cflag);
	}
	if (r == -1 || c->path == NULL || c->label == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	return 0;
}

void
circuit_free(struct circuit *c)
{
	free(c->path);
	free(c->label);
	free(c->reset_hint);
	memset(c, 0, sizeof(*c));
}

int
circuit_reporter(const struct options *o, const struct circuit *c,
    struct reporter *r)
{
	memset(r, 0, sizeof(*r));
	r->label = c->label;
	r->name = o->name;
	r->state_path = c->path;
	r->verbosity = o->verbosity;
	r->metrics_path = o->metrics_path;
	r->hook = o->on_state_change;
	r->hook_timeout = o->kill_after;
	return reporter_open(r, o->log_path);
}
