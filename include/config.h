/*
 * The config file (SPEC §6): option defaults keyed by long option name,
 * custom phases and classifier rules, loaded into struct options.
 */
#ifndef CBEXEC_CONFIG_H
#define CBEXEC_CONFIG_H

#include <stddef.h>

#include "cli.h"

/*
 * Load path into o: each option key is applied below the CLI and the
 * environment.  Returns 0, or -1 with "FILE: ..." naming the bad key.
 * A missing file is an error only when required (given with --config).
 */
int config_load(struct options *o, const char *path, int required,
    char *err, size_t len);

#endif
