/* SPDX-License-Identifier: ISC */
/*
 * The XDG base directories (XDG Base Directory Specification): a variable
 * such as XDG_STATE_HOME or XDG_CONFIG_HOME counts only when it holds an
 * absolute path; an empty or relative value is ignored and the default
 * under $HOME applies, so a stray relative value never puts cbexec's
 * files under whatever directory it happens to run in.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

char *
xdg_dir(const char *var, const char *home_sub, const char *leaf)
{
	const char *v = getenv(var), *home;
	char *p;

	if (v != NULL && v[0] == '/') {
		if (asprintf(&p, "%s/%s", v, leaf) == -1)
			return NULL;
		return p;
	}
	if ((home = getenv("HOME")) == NULL || home[0] == '\0')
		return NULL;
	if (asprintf(&p, "%s/%s/%s", home, home_sub, leaf) == -1)
		return NULL;
	return p;
}
