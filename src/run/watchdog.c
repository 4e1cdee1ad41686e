/* SPDX-License-Identifier: ISC */
/*
 * What survives a kill -9 of cbexec.  The command itself dies with it
 * (PR_SET_PDEATHSIG in spawn.c), but what the command started does not:
 * its processes are reparented to init, and cbexec, no longer there, can
 * neither see nor kill them.  So cbexec keeps, while anything of a run
 * or a helper may be alive, a small watchdog: a process of its own
 * session (no terminal signal reaches it) with every signal blocked, that
 * holds the read end of a pipe whose only writer is cbexec.  cbexec
 * writes the process group of each run (and of each helper) into a shared
 * page as it starts and ends, without waking the watchdog; when the pipe
 * reaches EOF -- cbexec is gone, however it went -- the watchdog sends
 * SIGKILL to the groups the page names and exits.
 *
 * The watchdog is made with clone(CLONE_VM): it shares cbexec's memory
 * instead of copying it, so starting it costs about what a thread costs,
 * where a fork copied the page tables and made every page cbexec wrote
 * afterwards fault (a third of a millisecond per invocation).  A process
 * of its own all the same, it outlives cbexec's SIGKILL, and keeps the
 * memory it runs in alive until it exits.  Sharing memory with cbexec
 * while cbexec runs on, it must not touch what cbexec uses: it runs on a
 * stack of its own, calls no function with state (raw system calls only,
 * none of which can fail there, so not even errno, which is cbexec's, is
 * written), and blocks every signal before it exists, so no handler of
 * cbexec's ever runs on its stack.  Under valgrind, which cannot run a
 * clone of that kind, it is forked as before.
 *
 * It is a child of cbexec that the run's "no child left" check passes
 * over (spawn.c), and that cbexec reaps on its way out (watch_stop), so
 * no zombie is left for an init that does not reap (a container's).
 * It is made when first needed: right after the run's command is spawned,
 * while that command's loader maps it (some hundreds of microseconds
 * before its program could fork anything), so the clone costs cbexec time
 * it would spend waiting, and before a helper (git, --progress-cmd, the
 * hook) is forked.  Before the last save of an invocation, when no group
 * is left to guard, it is let go (watch_release): it exits while the
 * state is written, and the reap at the end finds it gone instead of
 * waiting for it to be scheduled.  Anything spawned after that starts a
 * new one.
 * Cloned, it sends no signal when it exits, which makes it a "clone
 * child" that wait(2) without __WALL never reports: libev's SIGCHLD
 * handler never reaps it, and a waitid() that finds no other child means
 * that nothing of a run is left, without a look at /proc.  (Were cbexec
 * to die first, the kernel makes it an ordinary child of its new parent.)
 * What
 * a group kill cannot reach is a process that left the run's group
 * (setsid, setpgid) before cbexec died: while cbexec lives it kills those
 * too (spawn.c); after a kill -9 only a cgroup or a PID namespace could
 * find them, which an unprivileged cbexec does not have.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

#define STACK_SIZE (16 * 1024)

static int watch_fd = -1;
static int wanted;		/* watch_want(): runs are guarded */
pid_t watch_pid;
int watch_waitable;
/* The groups to kill, in a page shared with the watchdog however it was
 * made (MAP_SHARED survives a fork too). */
static pid_t *slots;

struct wd_arg {
	int rfd, wfd;
	int close_range;	/* the kernel has close_range(2) */
};

/*
 * The watchdog.  Only syscall(2): with CLONE_VM the libc wrappers'
 * interposers (a sanitizer's) would run on cbexec's thread state.
 */
__attribute__((no_sanitize_address))
static int
watchdog(void *p)
{
	const struct wd_arg *a = p;
	char c;
	int i;

	syscall(SYS_close, a->wfd);
	syscall(SYS_setsid);
	/* Hold nothing of cbexec's open files: not its stdout (a reader
	 * waiting for EOF), nothing inherited. */
#ifdef SYS_close_range
	if (a->close_range) {
		syscall(SYS_close_range, 0U, (unsigned)a->rfd - 1, 0U);
		syscall(SYS_close_range, (unsigned)a->rfd + 1, ~0U, 0U);
	}
#endif
	/* Nothing is ever written: 0 is EOF, anything else (an EINTR from
	 * being stopped and continued) means wait again. */
	while (syscall(SYS_read, a->rfd, &c, 1) != 0)
		;
	for (i = 0; i < WATCH_SLOTS; i++)
		if (__atomic_load_n(&slots[i], __ATOMIC_ACQUIRE) > 0)
			syscall(SYS_kill, -__atomic_load_n(&slots[i],
			    __ATOMIC_ACQUIRE), SIGKILL);
	syscall(SYS_exit, 0);
	return 0;
}

/* valgrind runs a program as a thread of its own; a clone(CLONE_VM) that
 * is no thread makes it abort. */
static int
under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p != NULL && strstr(p, "/vgpreload_") != NULL;
}

/* One let go earlier is waited for: it is gone before its stack and its
 * slots serve another. */
static void
watch_reap(void)
{
	int st;

	if (watch_pid == 0)
		return;
	while (waitpid(watch_pid, &st, __WALL) == -1 && errno == EINTR)
		;
	watch_pid = 0;
	watch_waitable = 0;
}

int
watch_start(void)
{
	static char stack[STACK_SIZE] __attribute__((aligned(16)));
	static struct wd_arg a;
	sigset_t all, old;
	int p[2], e;
	pid_t w;

	if (watch_fd != -1)
		return 0;
	watch_reap();
	if (slots == NULL) {
		slots = mmap(NULL, sizeof(pid_t) * WATCH_SLOTS, PROT_READ |
		    PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (slots == MAP_FAILED) {
			slots = NULL;
			return -1;
		}
	}
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	a.rfd = p[0];
	a.wfd = p[1];
#ifdef SYS_close_range
	/* Asked here, where a failure may set errno. */
	a.close_range = syscall(SYS_close_range, ~0U, ~0U, 0U) == 0;
#endif
	/* Born with every signal blocked: none of cbexec's handlers can
	 * run in it, and neither SIGINT from a terminal nor a SIGTERM for
	 * cbexec's group ends it. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (under_valgrind()) {
		if ((w = fork()) == 0)
			watchdog(&a);
		watch_waitable = 1;
	} else
		w = clone(watchdog, stack + sizeof(stack), CLONE_VM, &a);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (w == -1) {
		close(p[1]);
		errno = e;
		return -1;
	}
	watch_fd = p[1];
	watch_pid = w;
	return 0;
}

void
watch_release(void)
{
	int i;

	if (watch_fd == -1)
		return;
	for (i = 0; i < WATCH_SLOTS; i++)
		if (__atomic_load_n(&slots[i], __ATOMIC_ACQUIRE) > 0)
			return;
	/* EOF with no group to kill: it exits. */
	close(watch_fd);
	watch_fd = -1;
}

void
watch_want(void)
{
	wanted = 1;
}

void
watch_resume(void)
{
	/* Only where one is wanted: an operator verb's hook has none. */
	if (wanted)
		watch_start();
}

void
watch_stop(void)
{
	watch_group(WATCH_RUN, 0);
	watch_group(WATCH_HELPER, 0);
	watch_release();
	watch_reap();
}

void
watch_group(int slot, pid_t pgid)
{
	if (slots != NULL)
		__atomic_store_n(&slots[slot], pgid, __ATOMIC_RELEASE);
}
