/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of store/: what the handle (store.c) needs of the
 * state text (state.c) and of the Redis backend (redis.c).
 */
#ifndef CBEXEC_STORE_BACKEND_H
#define CBEXEC_STORE_BACKEND_H

#include <stddef.h>

#include "store.h"

/* The text of a state (len bytes, NUL after them) is one the loader may
 * parse: not empty, not too large, no NUL byte, UTF-8.  0, or -1 with
 * "WHERE: corrupt state ..." in err. */
int state_text_check(const char *where, const char *buf, size_t len,
    char *err, size_t errlen);
/* Parse checked text into *s (uninitialised): 0, or as state_load(). */
int state_parse(const char *where, const char *buf, size_t len,
    const char *name, struct cb_state *s, char *err, size_t errlen);

/* The same, keeping the parsed JSON in *j too (caller frees both), as
 * state_load_json(). */
int state_parse_json(const char *where, const char *buf, size_t len,
    struct cb_state *s, struct cJSON **j, char *err, size_t errlen);

/* One nap of a lock wait (wait and nap as state_lock(); deadline on
 * mono_now()'s clock when wait > 0): 0 to try again, -2 when there is no
 * waiting or it ran out, -3 when nap gave up.  *delay grows from 10 ms to
 * 50 ms. */
int lock_nap(double wait, double deadline, double *delay,
    int (*nap)(double));

/* The Redis backend of the handle; each as its store_* counterpart. */
int redis_open(struct store *st, const char *url, char *err, size_t errlen);
void redis_close(struct store *st);
int redis_lock(struct store *st, double wait, int (*nap)(double),
    char *err, size_t errlen);
void redis_unlock(struct store *st);
int redis_keepalive(struct store *st, char *err, size_t errlen);
int redis_keepalive_async(struct store *st, char *err, size_t errlen);
int redis_fd(const struct store *st);
int redis_load(struct store *st, struct cb_state *s, char *err,
    size_t errlen);
int redis_save(struct store *st, const char *text, char *err,
    size_t errlen);
int redis_exists(struct store *st, char *err, size_t errlen);
int redis_move_aside(struct store *st, char *newname, size_t newlen,
    char *err, size_t errlen);
int redis_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen);
int redis_get_json(struct store *st, const char *name, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen);
const char *redis_key(const struct store *st);
int redis_account_load(struct store *st, const char *name,
    struct cb_account *a, char *err, size_t errlen);
int redis_account_update(struct store *st, const char *name, int create,
    int (*fn)(struct cb_account *, void *), void *arg, char *aside,
    size_t asidelen, char *err, size_t errlen);
int redis_account_list(struct store *st, char ***names, size_t *n,
    char *err, size_t errlen);

#endif
