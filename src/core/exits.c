/* SPDX-License-Identifier: ISC */
/*
 * cbexec's exit statuses as one table, the rows of CB_EXIT_TABLE in
 * core.h: the enum of the codes, --exit-codes's keys, --help's lines and
 * the man page's and README's tables (t/unit/exits.c) all come from
 * there.  And the remapping main() does last.
 */
#include "core.h"

const struct cb_exit_row cb_exits[CB_EXIT_ROWS] = {
#define X(id, code, as, label, name, key, brief, help)			\
	{ code, as, label, name, key, brief, help },
	CB_EXIT_TABLE(X)
#undef X
};

int
exit_remap(const int as[CB_EXIT_ROWS], int code)
{
	size_t i;

	for (i = 0; i < CB_EXIT_ROWS; i++)
		if (cb_exits[i].key != NULL && cb_exits[i].code == code)
			return as[i];
	return code;
}
