/*
 * Private to the breaker (breaker.c, operator.c): the pieces every rule
 * uses to move a circuit and record what it did.
 */
#ifndef CBEXEC_BREAKER_INT_H
#define CBEXEC_BREAKER_INT_H

#include "breaker.h"

/* A malloc'd formatted string, or NULL on ENOMEM. */
#ifdef __GNUC__
__attribute__((format(printf, 1, 2)))
#endif
char *brk_fmt(const char *f, ...);
/* *dst replaced by a copy of src (NULL stays NULL). */
void brk_set_str(char **dst, const char *src);
/* A history event of kind at now; reason and user are copied later by
 * breaker_add_event(). */
void brk_event_init(struct cb_event *e, const struct cb_state *s,
    enum cb_event_kind kind, double now, const char *reason,
    const char *user);
/* Report a move from -> to in res (no state change, no history). */
void brk_add_transition(struct cb_result *res, enum cb_circuit from,
    enum cb_circuit to, const char *reason);
/* Move s to state to, reporting it in res and in the history. */
void brk_transition(struct cb_state *s, const struct cb_limits *l,
    struct cb_result *res, enum cb_circuit to, const char *reason,
    const char *user, double now);

#endif
