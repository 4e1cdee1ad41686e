/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the config file (SPEC §6): the input is written
 * to a file and loaded with config_load() into fresh options, then
 * cli_finish() settles them, as main() does.  Rules compile the input's
 * regexes; LeakSanitizer checks every error path frees what it took.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct options o;
	char err[512];
	int fd;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_config.%ld.json",
		    (long)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	options_init(&o);
	if (config_load(&o, path, 1, err, sizeof(err)) == 0)
		(void)cli_finish(&o, err, sizeof(err));
	options_free(&o);
	unlink(path);
	return 0;
}
