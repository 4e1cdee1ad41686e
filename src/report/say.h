/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files behind report.h (report.c, openblock.c, hook.c,
 * metrics.c, show.c): the colours, the stderr line writer and the --log
 * helpers, all defined in say.c, and the hook runner in hook.c.
 */
#ifndef CBEXEC_REPORT_SAY_H
#define CBEXEC_REPORT_SAY_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "breaker.h"
#include "report.h"

struct cJSON;

#define RED	"\033[31m"
#define GREEN	"\033[32m"
#define YELLOW	"\033[33m"
#define NOCOLOR	"\033[0m"

/* "SIGTERM", or "SIG%d" written into buf for a number without a name. */
const char *sig_name(int signo, char *buf, size_t len);
/* The circuit's name for messages: label, else the state file path. */
const char *label_of(const struct reporter *r);
/* Whether a terminal may be coloured: NO_COLOR unset or empty, TERM not
 * "dumb". */
int color_allowed(void);
/* RED for OPEN, YELLOW for HALF_OPEN, else GREEN. */
const char *circuit_color(int c);
/* A newline into m when the command's output left fd (1 or 2) in the
 * middle of a line (report_tails()), so what m holds starts a line. */
void line_start(FILE *m, int fd);
/* All of p to fd, retrying on EINTR; gives up silently on an error. */
void write_all(int fd, const char *p, size_t n);
/* One "cbexec[LABEL]: " line on stderr, in color if r->color. */
void say(const struct reporter *r, const char *color, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* v as a string member of o, or null when v is NULL. */
void add_str(struct cJSON *o, const char *key, const char *v);
#define STR_(x) #x
#define STR(x) STR_(x)

/* A --log object with v, timestamp, circuit and event; NULL without a
 * log.  log_new_at: the timestamp at (epoch seconds: the history
 * event's the object stands for), log_new: now. */
struct cJSON *log_new(const struct reporter *r, const char *event);
struct cJSON *log_new_at(const struct reporter *r, const char *event,
    double at);
/* Write o as one JSON line and free it; NULL is a no-op. */
void log_put(const struct reporter *r, struct cJSON *o);
/* A --log object with a reason. */
void log_reason(const struct reporter *r, const char *event,
    const char *reason);

/* Run the --on-state-change hook for t and wait for it (hook.c). */
void run_hook(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration);

#endif
