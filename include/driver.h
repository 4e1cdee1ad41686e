/*
 * One invocation: the circuit's lock and state, the runs, the breaker, and
 * the exit status (SPEC §2-§5).  Also the operator commands.
 */
#ifndef CBEXEC_DRIVER_H
#define CBEXEC_DRIVER_H

#include "cli.h"
#include "clock.h"

/* Which state file, and how people should name the circuit. */
struct circuit {
	char *path;		/* the state file */
	char *label;		/* NAME, else the path */
	char *reset_hint;	/* the command that resets it */
};

int circuit_resolve(const struct options *o, struct circuit *c,
    char *err, size_t len);
void circuit_free(struct circuit *c);

/* Run COMMAND under the breaker; returns the exit status (not remapped). */
int driver_run(struct options *o, const struct circuit *c);

/* --status, --history, --reset-circuit, --trip. */
int ops_status(const struct options *o, const struct circuit *c);
int ops_history(const struct options *o, const struct circuit *c);
int ops_reset(const struct options *o, const struct circuit *c);
int ops_trip(const struct options *o, const struct circuit *c);

/* The interactive menu of SPEC §5: 'r', 's', 'a', or 'm' with guidance
 * (malloc'd) in *guidance.  EOF is 'a'. */
int menu_ask(char **guidance);
/* Remember the terminal's modes (before any run) for the menu. */
void menu_save_tty(void);

struct reporter;
/* Fill r from the options, opening --log; 0 / -1 (message printed). */
int reporter_open(struct reporter *r, const struct options *o,
    const struct circuit *c);
void reporter_close(struct reporter *r);



#endif
