/*
 * cbexec's exit statuses (SPEC §2).  main.c is the only place that turns one
 * of these into a process exit; everything below it returns them.
 */
#ifndef CBEXEC_EXITCODES_H
#define CBEXEC_EXITCODES_H

enum cb_exit {
	CB_EXIT_OK = 0,
	CB_EXIT_OPEN = 120,
	CB_EXIT_STUCK = 121,
	CB_EXIT_ABORT = 122,
	CB_EXIT_BUSY = 123,
	CB_EXIT_TIMEOUT = 124,
	CB_EXIT_ERROR = 125,
	CB_EXIT_NOEXEC = 126,
	CB_EXIT_NOTFOUND = 127,
	CB_EXIT_SIGNAL = 128		/* plus the signal number */
};

#endif
