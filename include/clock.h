/*
 * The two clocks cbexec reads, as seconds in a double: wall time for
 * timestamps, monotonic time for every deadline and duration.
 */
#ifndef CBEXEC_CLOCK_H
#define CBEXEC_CLOCK_H

double wall_now(void);		/* CLOCK_REALTIME, epoch seconds */
double mono_now(void);		/* CLOCK_MONOTONIC */

#endif
