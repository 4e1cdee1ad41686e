/*
 * Private to the progress sources (phase.c, gitprint.c, filesprint.c,
 * probe.c); callers use progress.h.  The error-message helper.
 */
#ifndef CBEXEC_PROGRESS_INT_H
#define CBEXEC_PROGRESS_INT_H

#include <stddef.h>

/* probe.c */
/* vsnprintf into err, when there is an err to write to. */
void seterr(char *err, size_t errlen, const char *fmt, ...);

#endif
