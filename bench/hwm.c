/* SPDX-License-Identifier: ISC */
/*
 * hwm: an LD_PRELOAD object (built as bench/hwm.bin) whose destructor
 * appends "COMM PID VmHWM_KiB RssAnon_KiB RssFile_KiB" for the exiting
 * process to $BENCH_HWM.  That is the peak RSS of exactly that process,
 * read as it exits normally, where wait4's ru_maxrss (and so
 * /usr/bin/time %M) is the largest of the process and every child it
 * reaped.  It costs the process one small mapping (a few KiB of RSS).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long
field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p != NULL ? atol(p + strlen(key)) : -1;
}

__attribute__((destructor)) static void
hwm_report(void)
{
	char buf[4096], comm[64] = "?", line[256];
	const char *out = getenv("BENCH_HWM");
	ssize_t n;
	int fd, len;

	if (out == NULL || (fd = open("/proc/self/status", O_RDONLY)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	sscanf(buf, "Name:\t%63s", comm);
	len = snprintf(line, sizeof(line), "%s %ld %ld %ld %ld\n", comm,
	    (long)getpid(), field(buf, "VmHWM:"), field(buf, "RssAnon:"),
	    field(buf, "RssFile:"));
	if ((fd = open(out, O_WRONLY | O_APPEND | O_CREAT, 0600)) != -1) {
		(void)!write(fd, line, (size_t)len);
		close(fd);
	}
}
