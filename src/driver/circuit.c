/* SPDX-License-Identifier: ISC */
/*
 * Which circuit an invocation means (SPEC §1): --state or CBEXEC_STATE,
 * else --name in the state directory, else the working directory's, also
 * in the state directory; how people should name it in messages and the
 * command that resets it (shell-quoted, to be pasted); and the reporter
 * that speaks for it.
 *
 * With --store the circuit lives in a shared store under its NAME, which
 * is then required (a path or the working directory's circuit means
 * nothing to another host).  The state file of that name in the state
 * directory is still where the status file goes, and what --store-fallback
 * local runs on when the store cannot be reached.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "run.h"
#include "store.h"

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

/*
 * The working directory's circuit (SPEC §1): "dir-BASE-HASH" in the state
 * directory, BASE the last component of the canonical working directory
 * (bytes outside [A-Za-z0-9._-] as '_'), HASH the first 12 hex digits of
 * the SHA-256 of its path.  It lives outside the work tree, so nothing
 * the command does there (git clean -fdx) can remove or edit it, and the
 * name is also a valid NAME: --name dir-BASE-HASH reaches it from
 * anywhere.
 */
static char *
dir_circuit_name(char *err, size_t len)
{
	char cwd[PATH_MAX], hex[DIGEST_HEX_LEN + 1], *name, *p;
	const char *base;

	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		snprintf(err, len, "working directory: %s", strerror(errno));
		return NULL;
	}
	if (digest_hex(cwd, strlen(cwd), hex) == -1) {
		snprintf(err, len, "working directory: cannot hash its path%s%s",
		    digest_error() != NULL ? ": " : "",
		    digest_error() != NULL ? digest_error() : "");
		return NULL;
	}
	base = strrchr(cwd, '/') + 1;
	if (asprintf(&name, "dir-%s-%.12s", base, hex) == -1) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	for (p = name + 4; p < name + 4 + strlen(base); p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' &&
		    *p != '-')
			*p = '_';
	return name;
}

/*
 * The working directory's circuit used to be .cbexec/state.json in the
 * tree, where the command can delete or edit it; now it is kept in the
 * state directory.  While the new one does not exist yet, the next run
 * moves the old state there (circuit_migrate), so that a circuit tripped
 * before an upgrade stays tripped; until then, say where it is going.
 */
static void
legacy_notice(const char *path)
{
	struct stat st;

	if (lstat(LEGACY_STATE, &st) == 0 && lstat(path, &st) == -1 &&
	    errno == ENOENT)
		fprintf(stderr, "cbexec: %s, this directory's circuit before, "
		    "is no longer read here: the next run moves it to %s\n",
		    LEGACY_STATE, path);
}

int
circuit_migrate(const struct circuit *c, struct store *st,
    struct cb_state *s, char *err, size_t len)
{
	char why[CB_ERRLEN];
	int rc;

	if (!c->cwd)
		return 0;
	if ((rc = store_adopt(st, LEGACY_STATE, s, why, sizeof(why))) == 0)
		return 0;
	if (rc == -1) {
		snprintf(err, len, "%s, this directory's circuit before, "
		    "cannot be moved to %s: %s; it may hold an OPEN circuit: "
		    "review it, then move it there to keep it, or aside to "
		    "start afresh", LEGACY_STATE, c->path, why);
		return -1;
	}
	if (rc < 0) {
		snprintf(err, len, "%s", why);
		return -1;
	}
	fprintf(stderr, "cbexec: this directory's circuit (%s%s%s) moved "
	    "from %s to %s\n", circuit_name(s->state), s->open_reason ?
	    ": " : "", s->open_reason ? s->open_reason : "", LEGACY_STATE,
	    c->path);
	return 1;
}

int
circuit_resolve(const struct options *o, struct circuit *c, char *err,
    size_t len)
{
	const char *env_state = env_nonempty("CBEXEC_STATE");
	char *dir = NULL, *q = NULL, *cq = NULL, *dname = NULL, *sq = NULL;
	char label[256];
	size_t pw_off, pw_len;
	int r = 0;

	memset(c, 0, sizeof(*c));
	if (o->store != NULL && (o->state_path != NULL || o->name == NULL)) {
		snprintf(err, len, "--store keeps circuits by name: give "
		    "--name NAME (or CIRCUIT as a name)%s", o->state_path !=
		    NULL ? ", not a state file" : "");
		return -1;
	}
	if (o->chdir != NULL && (cq = shell_quote(o->chdir)) == NULL)
		goto oom;
	if (o->state_path != NULL || (o->name == NULL && env_state != NULL)) {
		const char *p = o->state_path ? o->state_path : env_state;

		if ((q = shell_quote(p)) == NULL)
			goto oom;
		c->path = strdup(p);
		c->label = strdup(p);
		r = asprintf(&c->reset_hint, "cbexec %s%s%s--reset-circuit "
		    "--state %s", cq != NULL && p[0] != '/' ? "-C " : "",
		    cq != NULL && p[0] != '/' ? cq : "",
		    cq != NULL && p[0] != '/' ? " " : "", q);
	} else {
		const char *name = o->name;

		if (name == NULL && (name = dname = dir_circuit_name(err,
		    len)) == NULL)
			return -1;
		if ((dir = circuit_state_dir(err, len)) == NULL) {
			free(dname);
			return -1;
		}
		r = asprintf(&c->path, "%s/%s.json", dir, name);
		/* The store in the hint when it can be pasted as it is:
		 * never a password (a user alone is fine: its password
		 * comes from elsewhere). */
		if (r != -1 && o->store != NULL &&
		    !store_url_password(o->store, &pw_off, &pw_len) &&
		    store_url_check(o->store, label, sizeof(label), err,
		    len) == 0 && (sq = shell_quote(o->store)) == NULL)
			r = -1;
		if (r != -1)
			r = asprintf(&c->reset_hint, "cbexec%s%s "
			    "--reset-circuit --name %s", sq != NULL ?
			    " --store " : "", sq != NULL ? sq : "", name);
		free(sq);
		c->label = strdup(name);
		c->cwd = dname != NULL;
		/* A run or --record moves it, and says so then. */
		if (r != -1 && dname != NULL && o->mode != MODE_RUN &&
		    o->mode != MODE_RECORD)
			legacy_notice(c->path);
	}
	free(dir);
	free(dname);
	free(q);
	free(cq);
	if (r == -1 || c->path == NULL || c->label == NULL)
		goto oom;
	return 0;
oom:
	free(q);
	free(cq);
	circuit_free(c);
	snprintf(err, len, "out of memory");
	return -1;
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
	r->run_hook = o->on_run;
	r->hook_timeout = o->kill_after;
	r->follow = o->follow_symlinks;
	r->account = o->account;
	r->account_gate = -1;
	if (reporter_open(r, o->log_path) == -1)
		return -1;
	/* What the configs' reading said goes into the log too. */
	allow_log_notes(r);
	return 0;
}

void
circuit_store_cfg(const struct options *o, struct store_cfg *cfg,
    char **dir)
{
	static int said_timeout;
	char err[CB_ERRLEN];

	memset(cfg, 0, sizeof(*cfg));
	cfg->url = o->store;
	cfg->lease = o->store_lease;
	cfg->timeout = o->store_timeout;
	cfg->password = o->store_password;
	cfg->ca = o->store_ca;
	cfg->cert = o->store_cert;
	cfg->key = o->store_key;
	cfg->follow = o->follow_symlinks;
	cfg->ca = o->store_ca;
	cfg->cert = o->store_cert;
	cfg->key = o->store_key;
	cfg->replicas = o->store_replicas;
	/* The operator signals end a wait for the store at once. */
	cfg->poll = sup_poll;
	/* The file store's circuits and accounts; a shared store needs
	 * none (its accounts are keys). */
	cfg->dir = *dir = o->store == NULL ? circuit_state_dir(err,
	    sizeof(err)) : NULL;
	/* A renewal must be able to fail and the run end within the lease:
	 * at most a third of it for each store command (SPEC §10). */
	if (o->store != NULL && cfg->lease < 3 * cfg->timeout - 1e-6) {
		cfg->timeout = cfg->lease / 3;
		if (!said_timeout++)
			fprintf(stderr, "cbexec: --store-timeout %gs is more "
			    "than a third of --store-lease %gs: using %gs\n",
			    o->store_timeout, o->store_lease, cfg->timeout);
	}
}

int
circuit_store(const struct options *o, const struct circuit *c,
    struct store **st, int fallback)
{
	struct store_cfg cfg;
	char err[CB_ERRLEN], label[256], *dir;
	int rc;

	circuit_store_cfg(o, &cfg, &dir);
	cfg.name = c != NULL ? o->name : NULL;
	cfg.path = c != NULL ? c->path : NULL;
	rc = store_open(st, &cfg, err, sizeof(err));
	if (rc == 0) {
		free(dir);
		return 0;
	}
	if (rc == -3) {
		free(dir);
		if (store_url_check(o->store, label, sizeof(label), err,
		    sizeof(err)) == -1)
			snprintf(label, sizeof(label), "the store");
		fprintf(stderr, "cbexec: circuit %s: interrupted while "
		    "connecting to %s; not going on\n", c != NULL ? c->label :
		    "-", label);
		return -2;
	}
	/* A store that answered and refused us (a replica, a certificate,
	 * a password), or settings that cannot work, is no store out of
	 * reach: never a reason to run on a local state. */
	if (!fallback || !o->store_fallback || c == NULL || rc == -2) {
		free(dir);
		fprintf(stderr, "cbexec: %s%s\n", err, fallback ?
		    "; not running the command" : "");
		return -1;
	}
	/* An account's gate lives in the store: the local state cannot say
	 * whether the account is open, so it does not run at all. */
	if (o->account != NULL) {
		free(dir);
		fprintf(stderr, "cbexec: %s; not running the command: "
		    "--store-fallback local cannot read account %s's gate "
		    "(it is in the store)\n", err, o->account);
		return -1;
	}
	/* --store-fallback local: this host's own state file instead, and
	 * every message and metric says so. */
	fprintf(stderr, "cbexec: %s; running on the local state %s instead "
	    "(--store-fallback local)\n", err, c->path);
	cfg.url = NULL;
	rc = store_open(st, &cfg, err, sizeof(err));
	free(dir);
	if (rc != 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	return 1;
}

int
circuit_lock(const struct options *o, const struct circuit *c,
    struct store *st, double wait, int budget)
{
	char err[CB_ERRLEN], where[CB_WHERELEN];
	int rc;

	/* The operator signals end the wait at once (sup_nap). */
	sup_hold();
	rc = store_lock(st, wait, sup_nap, err, sizeof(err));
	sup_release();
	if (rc == 0)
		return 0;
	store_lock_where(st, where, sizeof(where));
	if (rc == -3) {
		fprintf(stderr, "cbexec: circuit %s: interrupted while waiting "
		    "for the lock; not going on\n", c->label);
		return -CB_EXIT_ABORT;
	}
	if (rc == -2 && budget) {
		fprintf(stderr, "cbexec: circuit %s: the budget ran out "
		    "waiting for the lock %s\n", c->label, where);
		return -CB_EXIT_TIMEOUT;
	}
	if (rc == -2) {
		fprintf(stderr, "cbexec: circuit %s is busy: another "
		    "cbexec holds %s\n", c->label, where);
		return -CB_EXIT_BUSY;
	}
	fprintf(stderr, "cbexec: %s\n", err);
	return -CB_EXIT_ERROR;
}
