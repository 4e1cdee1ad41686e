/*
 * Durations as SPEC §1 writes them: N, N.N, .N with an optional lower-case
 * suffix ms, s, m, h or d; bare numbers are seconds; 0 means "no limit".
 */
#ifndef CBEXEC_DURATION_H
#define CBEXEC_DURATION_H

/* Ten years (365-day years), the largest duration accepted. */
#define DURATION_MAX (10.0 * 365 * 86400)

/*
 * Parse s into seconds.  Returns 0 on success, -2 for a well-formed
 * duration over DURATION_MAX, -1 for anything else: empty, sign, exponent,
 * unknown or upper-case suffix, trailing garbage.
 */
int duration_parse(const char *s, double *seconds);

/* Format seconds for humans ("2.41s", "15m", "1h30m"); returns buf. */
char *duration_format(double seconds, char *buf, unsigned long len);

#endif
