/* SPDX-License-Identifier: ISC */
/*
 * file_names() (core/file.c), the one walk of a directory the layers
 * above the store use: the names sorted, hidden ones included, "." and
 * ".." never; a suffix picks; the caller's descriptor is left where it
 * was, so listing twice lists the same; an empty directory is an empty
 * list, a descriptor of no directory an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "tap.h"

/* The names of v joined by spaces, into buf. */
static const char *
joined(char **v, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; v != NULL && v[i] != NULL && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i > 0 ? " " : "",
		    v[i]);
	return v != NULL ? buf : "(null)";
}

static void
touch(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	if (fd != -1)
		close(fd);
}

int
main(void)
{
	char tmpl[512], buf[512], path[600];
	const char *files[] = { "b.json", "a.json", ".run-1-2", "c.txt",
	    "0123.json.tmp", "json" };
	char **v;
	size_t i;
	int dfd, fd, e;

	snprintf(tmpl, sizeof(tmpl), "%s/cbexec-names.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpl) == NULL ||
	    (dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		printf("1..0 # skip no temporary directory\n");
		return 0;
	}
	v = file_names(dfd, "");
	is_str(joined(v, buf, sizeof(buf)), "", "an empty directory: no names");
	ok(v != NULL && v[0] == NULL, "... an empty list, not an error");
	file_names_free(v);

	for (i = 0; i < NELEM(files); i++)
		touch(dfd, files[i]);
	mkdirat(dfd, "d.json", 0700);
	v = file_names(dfd, "");
	is_str(joined(v, buf, sizeof(buf)), ".run-1-2 0123.json.tmp a.json "
	    "b.json c.txt d.json json", "every name, sorted, hidden ones too");
	file_names_free(v);
	v = file_names(dfd, "");
	is_str(joined(v, buf, sizeof(buf)), ".run-1-2 0123.json.tmp a.json "
	    "b.json c.txt d.json json", "listed again from the same descriptor: "
	    "the same");
	file_names_free(v);
	v = file_names(dfd, ".json");
	is_str(joined(v, buf, sizeof(buf)), "a.json b.json d.json",
	    "a suffix picks the names that end in it");
	file_names_free(v);
	ok(fstatat(dfd, "a.json", &(struct stat){ 0 }, 0) == 0 &&
	    unlinkat(dfd, "a.json", 0) == 0,
	    "the caller's descriptor still names the directory");

	snprintf(path, sizeof(path), "%s/c.txt", tmpl);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	errno = 0;
	v = file_names(fd, "");
	e = errno;
	ok(v == NULL && e == ENOTDIR, "a descriptor of a file: ENOTDIR");
	file_names_free(v);
	close(fd);

	for (i = 0; i < NELEM(files); i++)
		unlinkat(dfd, files[i], 0);
	unlinkat(dfd, "d.json", AT_REMOVEDIR);
	close(dfd);
	rmdir(tmpl);
	return done_testing();
}
