/* SPDX-License-Identifier: ISC */
/*
 * The bounded ring: keeps the last cap bytes in order through wraparound,
 * oversized pushes, cap 0, embedded NULs, clear and free; and filled in
 * place (ring_room, ring_commit), as the relay reads into it.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tap.h"

/* Compare the ring's contents with want; frees the copy. */
static void
holds(const struct ring *r, const char *want, size_t wlen, const char *desc)
{
	size_t len = 12345;
	char *s = ring_dup(r, &len);

	if (!ok(s != NULL && len == wlen && memcmp(s, want, wlen) == 0 &&
	    s[len] == '\0', desc))
		printf("#   got %zu bytes \"%s\", want %zu \"%s\"\n", len,
		    s ? s : "(null)", wlen, want);
	free(s);
}

int
main(void)
{
	struct ring r;
	char big[10000];
	size_t i, len;
	char *s;

	is_int(ring_init(&r, 8), 0, "init cap 8");
	holds(&r, "", 0, "a new ring is empty");
	ring_push(&r, "abc", 3);
	holds(&r, "abc", 3, "push below cap keeps everything");
	ring_push(&r, "defgh", 5);
	holds(&r, "abcdefgh", 8, "exactly full");
	ring_push(&r, "ij", 2);
	holds(&r, "cdefghij", 8, "one more push drops the oldest bytes");
	ring_push(&r, "klmnop", 6);
	holds(&r, "ijklmnop", 8, "wraparound keeps order");
	is_int(r.len, 8, "len stays at cap");
	ring_push(&r, "", 0);
	holds(&r, "ijklmnop", 8, "an empty push changes nothing");
	ring_push(&r, "0123456789ABCDEF", 16);
	holds(&r, "89ABCDEF", 8, "a push larger than cap keeps its last cap bytes");
	ring_push(&r, "01234567", 8);
	holds(&r, "01234567", 8, "a push of exactly cap replaces everything");
	ring_push(&r, "x", 1);
	holds(&r, "1234567x", 8, "and the ring goes on from there");
	ring_push(&r, "a\0b", 3);
	holds(&r, "4567xa\0b", 8, "NUL bytes are data");

	ring_clear(&r);
	holds(&r, "", 0, "clear empties it");
	ring_push(&r, "hello", 5);
	holds(&r, "hello", 5, "usable after clear");
	ring_free(&r);
	ok(r.buf == NULL && r.len == 0 && r.cap == 0, "free resets the ring");

	/* many small pushes across many wraps */
	is_int(ring_init(&r, 7), 0, "init cap 7");
	for (i = 0; i < 1000; i++)
		ring_push(&r, &"0123456789"[i % 10], 1);
	holds(&r, "3456789", 7, "1000 one-byte pushes keep the last 7");
	for (i = 0; i < 100; i++)
		ring_push(&r, "abc", 3);
	holds(&r, "cabcabc", 7, "3-byte pushes over a 7-byte ring");
	ring_free(&r);

	is_int(ring_init(&r, 0), 0, "init cap 0");
	ring_push(&r, "abc", 3);
	holds(&r, "", 0, "cap 0 keeps nothing");
	s = ring_dup(&r, NULL);
	ok(s != NULL && *s == '\0', "dup of cap 0 is an empty string (len NULL ok)");
	free(s);
	ring_free(&r);

	is_int(ring_init(&r, 4096), 0, "init cap 4096");
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	ring_push(&r, big, 100);
	ring_push(&r, big, sizeof(big));
	s = ring_dup(&r, &len);
	ok(s != NULL && len == 4096 &&
	    memcmp(s, big + sizeof(big) - 4096, 4096) == 0,
	    "a big push after a small one keeps the big one's tail");
	free(s);
	ring_free(&r);
	ring_free(&r);
	ok(1, "ring_free twice is harmless");
	/* In place: the same bytes as ring_push would keep, wrapping. */
	{
		struct ring a, b;
		char *x, *y, *want;
		size_t xl, yl, wl;
		const char *parts[] = { "abc", "defgh", "ij", "klmnopq", "r" };
		size_t k, n;

		ring_init(&a, 8);
		ring_init(&b, 8);
		for (k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			n = strlen(parts[k]);
			ring_push(&a, parts[k], n);
			ring_room(&b, n, &x, &xl, &y, &yl);
			memcpy(x, parts[k], xl);
			memcpy(y, parts[k] + xl, yl);
			ring_commit(&b, n);
		}
		want = ring_dup(&a, &wl);
		holds(&b, want, wl, "filled in place: what ring_push keeps");
		free(want);
		holds(&b, "klmnopqr", 8, "... the last 8 bytes, in order");
		ring_room(&b, 8, &x, &xl, &y, &yl);
		ok(xl + yl == 8 && (yl == 0 || y == b.buf), "a whole cap: two spans from the newest byte on");
		ring_free(&a);
		ring_free(&b);
	}
	return done_testing();
}
