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
 *
 * It also keeps the deadlines of what it guards (SPEC §11, "Every wait is
 * bounded"): a command that stops cbexec (kill -STOP $PPID) stops its
 * timers, never the watchdog's, which no signal aimed at cbexec or at the
 * command's group reaches.  cbexec writes each group's deadlines into the
 * shared page -- the signal and when (--timeout or --budget, whichever
 * comes first), --kill-after, a shared store's lease -- and what it has
 * sent itself; the watchdog sleeps until the next one, woken through the
 * pipe only when cbexec moves one earlier than the time it sleeps to.
 * When one comes and cbexec has not acted on it, the watchdog acts: at
 * once when cbexec is stopped (its /proc stat says T), else a second
 * later (cbexec merely late acts first), sending the signal as cbexec
 * would (and SIGCONT), SIGKILL at --kill-after, and noting what it did
 * so that cbexec, once continued, records the run as the timeout it was.
 * Its system calls are made without the C library (wd_sys): a call that
 * fails must not write errno, which is cbexec's while cbexec runs.
 * And it keeps copies of what says a run was going on (watch_will): the
 * run's start record and its registration under allow/ (allow.c).  When
 * cbexec dies with a run going on, the watchdog writes them again where
 * they were, so that a command that erased or touched them before killing
 * cbexec has its run counted and what it approved revoked all the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "run.h"
#include "spawn.h"

#define STACK_SIZE (16 * 1024)
/* How late cbexec may be, running but not stopped, before the watchdog
 * acts for it; and how often it looks again meanwhile. */
#define WD_GRACE	1000000000LL
#define WD_RECHECK	100000000LL

static int watch_fd = -1;
static int wanted;		/* watch_want(): runs are guarded */
pid_t watch_pid;
int watch_waitable;

/* What the watchdog keeps for each group, times in nanoseconds on
 * CLOCK_MONOTONIC (mono_now()'s clock), 0 for none. */
struct wslot {
	pid_t pgid;		/* 0: nothing to guard */
	int sig;		/* sent at sig_at (0: none) */
	int why;		/* WATCH_TIMEOUT, WATCH_BUDGET, ... */
	int done;		/* WATCH_SENT | WATCH_KILLED | WATCH_WD_* */
	long long sig_at, kill_after, kill_at, lease_at;
};
/* In a page shared with the watchdog however it was made (MAP_SHARED
 * survives a fork too). */
static struct wpage {
	struct wslot s[WATCH_SLOTS];
	unsigned gen;		/* moved by cbexec after each change */
	long long sleep_until;	/* the watchdog's next look; 0: none */
	/* watch_will(): blocks to write at the start of files when
	 * cbexec is gone (len 0: none) */
	struct {
		long len;
		char path[PATH_MAX];
		char buf[WATCH_WILL_MAX];
	} will[WATCH_WILLS];
} *page;

struct wd_arg {
	int rfd, wfd;
	int close_range;	/* the kernel has close_range(2) */
};

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/*
 * A system call that never touches errno: with CLONE_VM the watchdog
 * shares cbexec's thread state, and a failed kill(2) through the C
 * library would write cbexec's errno behind its back.
 */
__attribute__((no_sanitize_address))
static long
wd_sys(long n, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long r;

	__asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b),
	    "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
	return r;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;

	__asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2),
	    "r"(x3), "r"(x4) : "memory");
	return x0;
#else
	return syscall(n, a, b, c, d, e);
#endif
}

__attribute__((no_sanitize_address))
static long long
wd_now(void)
{
	struct timespec ts = { 0, 0 };

	wd_sys(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The state letter of process pid in its /proc stat (after the last
 * ')'): T stopped, Z a zombie...; 0 when there is no such process. */
__attribute__((no_sanitize_address))
static char
wd_state(long pid)
{
	static const char pre[] = "/proc/", post[] = "/stat";
	char path[40], buf[512], digits[24];
	long n, fd;
	int i = 0, j, close_paren = -1;

	if (pid <= 0)
		return 0;
	/* Byte by byte: no C library call (memcpy may be an interposer's). */
	for (j = 0; pre[j] != '\0'; j++)
		path[j] = pre[j];
	do
		digits[i++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	while (i > 0)
		path[j++] = digits[--i];
	for (i = 0; i < (int)sizeof(post); i++)
		path[j++] = post[i];
	if ((fd = wd_sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY |
	    O_CLOEXEC, 0, 0)) < 0)
		return 0;
	n = wd_sys(SYS_read, fd, (long)buf, sizeof(buf), 0, 0);
	wd_sys(SYS_close, fd, 0, 0, 0, 0);
	for (i = 0; i < n; i++)
		if (buf[i] == ')')
			close_paren = i;
	return close_paren >= 0 && close_paren + 2 < n ?
	    buf[close_paren + 2] : 0;
}

/* cbexec, our parent, is stopped (SIGSTOP, SIGTSTP, a tracer). */
__attribute__((no_sanitize_address))
static int
wd_parent_stopped(void)
{
	long ppid = wd_sys(SYS_getppid, 0, 0, 0, 0, 0);
	char c = ppid > 1 ? wd_state(ppid) : 0;

	return c == 'T' || c == 't';
}

/* The group's leader (the command, or the helper) has exited already: a
 * zombie cbexec has not reaped, or gone. */
__attribute__((no_sanitize_address))
static int
wd_over(pid_t pgid)
{
	char c = wd_state(pgid);

	return c == 0 || c == 'Z' || c == 'X';
}

/* Send sig to the group and its leader, and SIGCONT with any signal but
 * SIGKILL, as cbexec's group_kill does (a stopped command acts on it). */
__attribute__((no_sanitize_address))
static void
wd_kill(pid_t pgid, int sig)
{
	wd_sys(SYS_kill, -pgid, sig, 0, 0, 0);
	wd_sys(SYS_kill, pgid, sig, 0, 0, 0);
	if (sig != SIGKILL && sig != SIGCONT) {
		wd_sys(SYS_kill, -pgid, SIGCONT, 0, 0, 0);
		wd_sys(SYS_kill, pgid, SIGCONT, 0, 0, 0);
	}
}

/*
 * Whether a deadline at has come for the watchdog to act on: at once
 * when cbexec is stopped, WD_GRACE later when it runs (it will act
 * itself).  Otherwise *next is moved to when to look again.
 */
__attribute__((no_sanitize_address))
static int
wd_due(long long at, long long now, int *stopped, long long *next)
{
	long long again;

	if (at <= 0)
		return 0;
	if (now >= at) {
		if (*stopped < 0)
			*stopped = wd_parent_stopped();
		if (*stopped || now >= at + WD_GRACE)
			return 1;
		again = now + WD_RECHECK < at + WD_GRACE ? now + WD_RECHECK :
		    at + WD_GRACE;
	} else
		again = at;
	if (*next == 0 || again < *next)
		*next = again;
	return 0;
}

/* The deadlines of one slot that have come; the next in *next. */
__attribute__((no_sanitize_address))
static void
wd_slot(struct wslot *s, long long now, int *stopped, long long *next)
{
	pid_t pgid = LD(s->pgid);
	int done = LD(s->done), sig = LD(s->sig);
	long long ka = LD(s->kill_after), kat;

	/* Deadlines set, the group not yet named (its child names itself
	 * before it execs): look again shortly. */
	if (pgid <= 0) {
		kat = LD(s->sig_at);
		if (kat <= 0 || (LD(s->kill_at) > 0 && LD(s->kill_at) < kat))
			kat = LD(s->kill_at);
		if (kat <= 0 || (LD(s->lease_at) > 0 && LD(s->lease_at) < kat))
			kat = LD(s->lease_at);
		if (kat > 0) {
			kat = kat > now ? kat : now + WD_RECHECK;
			if (*next == 0 || kat < *next)
				*next = kat;
		}
		return;
	}
	if (!(done & (WATCH_SENT | WATCH_KILLED | WATCH_WD_SENT)) &&
	    wd_due(LD(s->sig_at), now, stopped, next)) {
		/* A leader that had exited before (cbexec had not yet
		 * reaped it): what is left is ended, but the run itself
		 * was no timeout. */
		__atomic_or_fetch(&s->done, wd_over(pgid) ? WATCH_WD_AFTER : 0,
		    __ATOMIC_SEQ_CST);
		if (sig != 0)
			wd_kill(pgid, sig);
		__atomic_or_fetch(&s->done, WATCH_WD_SENT, __ATOMIC_SEQ_CST);
		done |= WATCH_WD_SENT;
		/* --kill-after counts from the signal, as cbexec's does;
		 * with -s 0 it counts from the deadline itself. */
		if (ka > 0 && LD(s->kill_at) == 0)
			ST(s->kill_at, (sig != 0 ? now : LD(s->sig_at)) + ka);
	}
	kat = LD(s->kill_at);
	if (!(done & (WATCH_KILLED | WATCH_WD_KILLED)) &&
	    wd_due(kat, now, stopped, next)) {
		if (!(done & (WATCH_SENT | WATCH_WD_SENT)) && wd_over(pgid))
			__atomic_or_fetch(&s->done, WATCH_WD_AFTER,
			    __ATOMIC_SEQ_CST);
		wd_kill(pgid, SIGKILL);
		__atomic_or_fetch(&s->done, WATCH_WD_KILLED,
		    __ATOMIC_SEQ_CST);
		done |= WATCH_WD_KILLED;
	}
	if (!(done & (WATCH_KILLED | WATCH_WD_KILLED)) &&
	    wd_due(LD(s->lease_at), now, stopped, next)) {
		wd_kill(pgid, SIGKILL);
		__atomic_or_fetch(&s->done, WATCH_WD_KILLED | WATCH_WD_LEASE,
		    __ATOMIC_SEQ_CST);
	}
}

/* Whether the lock file on fd holds no start record (blank, short or
 * empty: erased). */
static int
wd_blank(long fd)
{
	char c;

	return wd_sys(SYS_pread64, fd, (long)&c, 1, 0, 0) != 1 || c == ' ' ||
	    c == '\n';
}

/* The circuit's lock on fd, as cbexec takes it: 0, or -1 when another
 * holds it (past half a second).  cbexec's own is let go as it dies,
 * maybe just after its pipe's end told the watchdog. */
static int
wd_lock(long fd)
{
	struct timespec ms = { 0, 5000000 };
	int i;

	for (i = 0; i < 100; i++) {
		if (wd_sys(SYS_flock, fd, LOCK_EX | LOCK_NB, 0, 0, 0) == 0)
			return 0;
		wd_sys(SYS_nanosleep, (long)&ms, 0, 0, 0, 0);
	}
	return -1;
}

/*
 * The watchdog: only raw system calls (wd_sys) -- with CLONE_VM the libc
 * wrappers' interposers (a sanitizer's) and errno would be cbexec's.
 */
__attribute__((no_sanitize_address))
static int
watchdog(void *p)
{
	const struct wd_arg *a = p;
	struct pollfd pfd;
	struct timespec ts;
	long long now, next, left;
	unsigned gen;
	char buf[64];
	long n;
	int i, stopped;

	wd_sys(SYS_close, a->wfd, 0, 0, 0, 0);
	wd_sys(SYS_setsid, 0, 0, 0, 0, 0);
	/* Hold nothing of cbexec's open files: not its stdout (a reader
	 * waiting for EOF), nothing inherited. */
#ifdef SYS_close_range
	if (a->close_range) {
		wd_sys(SYS_close_range, 0, (unsigned)a->rfd - 1, 0, 0, 0);
		wd_sys(SYS_close_range, (unsigned)a->rfd + 1, ~0U, 0, 0, 0);
	}
#endif
	for (;;) {
		gen = LD(page->gen);
		now = wd_now();
		next = 0;
		stopped = -1;
		for (i = 0; i < WATCH_SLOTS; i++)
			wd_slot(&page->s[i], now, &stopped, &next);
		ST(page->sleep_until, next);
		/* cbexec changed a deadline meanwhile: look again. */
		if (LD(page->gen) != gen)
			continue;
		pfd.fd = a->rfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (next > 0) {
			left = next - wd_now();
			if (left < 0)
				left = 0;
			ts.tv_sec = left / 1000000000LL;
			ts.tv_nsec = left % 1000000000LL;
		}
		if (wd_sys(SYS_ppoll, (long)&pfd, 1, next > 0 ? (long)&ts : 0,
		    0, 0) <= 0)
			continue;	/* a deadline, or stopped and continued */
		/* cbexec writes only to wake it: EOF is cbexec gone. */
		if ((n = wd_sys(SYS_read, a->rfd, (long)buf, sizeof(buf), 0,
		    0)) == 0)
			break;
	}
	for (i = 0; i < WATCH_SLOTS; i++)
		if (LD(page->s[i].pgid) > 0)
			wd_sys(SYS_kill, -LD(page->s[i].pgid), SIGKILL, 0, 0, 0);
	/* cbexec died with a run on record: the record is written again
	 * where it was, in case the command erased it first.  The start
	 * record only under the circuit's lock, and only where the lock
	 * file holds none: the next cbexec may already hold the circuit
	 * (and its own record), or have counted the run and saved. */
	for (i = 0; i < WATCH_WILLS; i++) {
		long fd;

		if ((n = LD(page->will[i].len)) <= 0 || (fd = wd_sys(SYS_openat,
		    AT_FDCWD, (long)page->will[i].path, O_RDWR | O_CREAT |
		    (i == WATCH_WILL_RECORD ? 0 : O_TRUNC) | O_NOFOLLOW |
		    O_CLOEXEC, 0600, 0)) < 0)
			continue;
		if (i != WATCH_WILL_RECORD || (wd_blank(fd) &&
		    wd_lock(fd) == 0 && wd_blank(fd)))
			wd_sys(SYS_pwrite64, fd, (long)page->will[i].buf, n, 0,
			    0);
		wd_sys(SYS_close, fd, 0, 0, 0, 0);
	}
	wd_sys(SYS_exit, 0, 0, 0, 0, 0);
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

static int
page_map(void)
{
	if (page == NULL) {
		page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED) {
			page = NULL;
			return -1;
		}
	}
	return 0;
}

void
watch_will(int i, const char *path, const char *buf, size_t n)
{
	if (i < 0 || i >= WATCH_WILLS || page_map() == -1)
		return;
	ST(page->will[i].len, 0);
	if (path == NULL || n == 0 || n > sizeof(page->will[i].buf) ||
	    strlen(path) >= sizeof(page->will[i].path))
		return;
	memcpy(page->will[i].path, path, strlen(path) + 1);
	memcpy(page->will[i].buf, buf, n);
	ST(page->will[i].len, (long)n);
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
	if (page_map() == -1)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	/* A wake-up never blocks cbexec, even with the watchdog stopped
	 * and the pipe full (a full pipe wakes it all the same). */
	fcntl(p[1], F_SETFL, O_NONBLOCK);
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
		if (LD(page->s[i].pgid) > 0)
			return;
	/* cbexec saves from here on itself. */
	for (i = 0; i < WATCH_WILLS; i++)
		ST(page->will[i].len, 0);
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
	if (page == NULL)
		return;
	/* Let go: its deadlines go with it. */
	if (pgid == 0)
		watch_quiet(slot);
	ST(page->s[slot].pgid, pgid);
}

void
watch_arm(int slot)
{
	struct wslot *s;

	if (page == NULL)
		return;
	s = &page->s[slot];
	ST(s->pgid, 0);
	ST(s->sig, 0);
	ST(s->why, 0);
	ST(s->done, 0);
	ST(s->sig_at, 0);
	ST(s->kill_after, 0);
	ST(s->kill_at, 0);
	ST(s->lease_at, 0);
}

void
watch_claim(int slot)
{
	/* In the child, before exec: a store to the shared page, safe
	 * after fork and vfork alike. */
	if (page != NULL)
		__atomic_store_n(&page->s[slot].pgid, getpid(),
		    __ATOMIC_SEQ_CST);
}

static long long
to_ns(double at)
{
	return at > 0 ? (long long)(at * 1e9) : 0;
}

/* A deadline was set or moved: the watchdog is woken when it sleeps past
 * it (or sleeps without one).  The generation moves first, so a watchdog
 * that is just deciding how long to sleep sees it, or its decision is
 * seen here. */
static void
wake_for(long long at)
{
	long long until;
	char c = 0;

	__atomic_add_fetch(&page->gen, 1, __ATOMIC_SEQ_CST);
	if (at <= 0 || watch_fd == -1)
		return;
	until = LD(page->sleep_until);
	if (until == 0 || at < until)
		(void)!write(watch_fd, &c, 1);
}

void
watch_deadline(int slot, int sig, double sig_at, double kill_after, int why)
{
	struct wslot *s;

	if (page == NULL)
		return;
	s = &page->s[slot];
	ST(s->sig, sig);
	ST(s->why, why);
	ST(s->kill_after, to_ns(kill_after));
	ST(s->kill_at, sig == 0 && sig_at > 0 && kill_after > 0 ?
	    to_ns(sig_at + kill_after) : 0);
	ST(s->sig_at, to_ns(sig_at));
	wake_for(LD(s->kill_at) > 0 && LD(s->kill_at) < to_ns(sig_at) ?
	    LD(s->kill_at) : to_ns(sig_at));
}

void
watch_lease(int slot, double at)
{
	if (page == NULL)
		return;
	ST(page->s[slot].lease_at, to_ns(at));
	wake_for(to_ns(at));
}

void
watch_sent(int slot, int sig, double kill_at)
{
	struct wslot *s;
	long long k = to_ns(kill_at);

	if (page == NULL)
		return;
	s = &page->s[slot];
	if (sig != 0)
		__atomic_or_fetch(&s->done, sig == SIGKILL ? WATCH_SENT |
		    WATCH_KILLED : WATCH_SENT, __ATOMIC_SEQ_CST);
	if (sig != SIGKILL && k > 0 && (LD(s->kill_at) == 0 ||
	    k < LD(s->kill_at))) {
		ST(s->kill_at, k);
		wake_for(k);
	}
}

void
watch_quiet(int slot)
{
	struct wslot *s;

	if (page == NULL)
		return;
	s = &page->s[slot];
	ST(s->sig_at, 0);
	ST(s->kill_at, 0);
	ST(s->lease_at, 0);
	__atomic_add_fetch(&page->gen, 1, __ATOMIC_SEQ_CST);
}

int
watch_fired(int slot, int *why)
{
	int done;

	if (page == NULL)
		return 0;
	done = LD(page->s[slot].done);
	if (why != NULL)
		*why = LD(page->s[slot].why);
	return done;
}
