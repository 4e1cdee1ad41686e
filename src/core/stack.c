/* SPDX-License-Identifier: ISC */
/*
 * The stack cbexec needs, whatever `ulimit -s` it was started under.
 *
 * Below a few hundred KiB cbexec died by SIGSEGV (139) after its run,
 * before the save: the run counted as killed at the next invocation.
 * Linux checks RLIMIT_STACK when the stack grows, so raising the soft
 * limit (up to the hard one) at the start is enough; the commands cbexec
 * starts get the limit it was started with back (stack_restore() in the
 * child, before exec).
 */
#include <stdio.h>
#include <sys/resource.h>

#include "core.h"

#define STACK_WANT (8UL << 20)	/* what a default shell gives */
#define STACK_NEED (256UL << 10)	/* below this cbexec may not finish */

static struct rlimit given;
static int raised;

int
stack_room(char *err, size_t errlen)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &given) == -1 ||
	    given.rlim_cur == RLIM_INFINITY || given.rlim_cur >= STACK_WANT)
		return 0;
	rl = given;
	rl.rlim_cur = given.rlim_max == RLIM_INFINITY ||
	    given.rlim_max > STACK_WANT ? STACK_WANT : given.rlim_max;
	if (rl.rlim_cur > given.rlim_cur && setrlimit(RLIMIT_STACK, &rl) == 0)
		raised = 1;
	else
		rl.rlim_cur = given.rlim_cur;
	if (rl.rlim_cur < STACK_NEED) {
		snprintf(err, errlen, "a stack limit of %lu KiB (ulimit -s) is "
		    "too small: cbexec needs %lu KiB", (unsigned long)
		    (rl.rlim_cur >> 10), STACK_NEED >> 10);
		return -1;
	}
	return 0;
}

void
stack_restore(void)
{
	if (raised)
		(void)setrlimit(RLIMIT_STACK, &given);
}
