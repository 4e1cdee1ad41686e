/* SPDX-License-Identifier: ISC */
/*
 * The --store URL (store_url_check, store/redis.c): which URLs are taken,
 * what the label that messages and metrics show says (never the
 * password), where the password is in the text (store_url_password, for
 * what overwrites it in cbexec's arguments), and the state's generation
 * through the JSON.
 */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "store.h"
#include "tap.h"

static const char *
label(const char *url)
{
	static char l[256], err[256];

	if (store_url_check(url, l, sizeof(l), err, sizeof(err)) == -1)
		return NULL;
	return l;
}

int
main(void)
{
	static const char *bad[] = {
		"", "redis", "http://h", "redis://", "redis://:6379",
		"redis://h:0", "redis://h:65536", "redis://h:12x", "redis://h/x",
		"redis://h/1/2", "redis://@h", "redis://u:p%zz@h", "rediss://",
		"rediss:/h", "redis+tls://h",
		"redis://[::1", "redis://h h", "unix://", "unix://rel.sock",
		"unix:///", "unix:///s?db=", "unix:///s?db=x", "unix:///s?x=1",
		"redis://h/99999999", NULL
	};
	struct cb_state s, t;
	char err[256], *text;
	cJSON *j;
	size_t i;

	is_str(label("redis://h"), "redis://h:6379/0", "defaults: port, db");
	is_str(label("redis://h:7000/3"), "redis://h:7000/3", "port and db");
	is_str(label("redis://h/"), "redis://h:6379/0", "a trailing slash");
	is_str(label("redis://u:secret@h:1/2"), "redis://u@h:1/2",
	    "user kept, password dropped");
	is_str(label("redis://:secret@h"), "redis://h:6379/0",
	    "a password alone is dropped");
	is_str(label("redis://[::1]:6380"), "redis://[::1]:6380/0", "IPv6");
	is_str(label("redis://cbexec@h"), "redis://cbexec@h:6379/0",
	    "a user alone (its password from elsewhere)");
	is_str(label("rediss://cbexec:pw@h:6380/1"),
	    "rediss://cbexec@h:6380/1", "rediss://, password dropped");
	is_str(label("redis://u:p@ss@h"), "redis://u@h:6379/0",
	    "credentials end at the last '@'");
	{
		static const struct {
			const char *url;
			size_t off, len;
		} pw[] = {
			{ "redis://u:secret@h", 10, 6 },
			{ "redis://:secret@h:1/2", 9, 6 },
			{ "rediss://u:p%40ss@h", 11, 6 },
			{ "redis://u:p@ss@h", 10, 4 },
			{ "redis://u:p:w@h", 10, 3 },
			{ "redis://cbexec@h", 0, 0 },
			{ "redis://u:@h", 0, 0 },
			{ "redis://h", 0, 0 },
			{ "unix:///s@x", 0, 0 },
			{ "redis://u:pw@h/x", 0, 0 },	/* no URL at all */
		};
		size_t off, len;
		char desc[128];

		for (i = 0; i < sizeof(pw) / sizeof(pw[0]); i++) {
			int has = store_url_password(pw[i].url, &off, &len);

			snprintf(desc, sizeof(desc), "the password of '%s': "
			    "%zu bytes at %zu", pw[i].url, pw[i].len,
			    pw[i].off);
			ok(has == (pw[i].len > 0) && off == pw[i].off &&
			    len == pw[i].len, desc);
		}
	}
	is_str(label("unix:///run/redis.sock"), "unix:///run/redis.sock",
	    "a socket");
	is_str(label("unix:///run/redis.sock?db=2"),
	    "unix:///run/redis.sock?db=2", "a socket and a db");
	for (i = 0; bad[i] != NULL; i++) {
		char desc[128];

		snprintf(desc, sizeof(desc), "refused: '%s'", bad[i]);
		ok(label(bad[i]) == NULL, desc);
	}
	ok(store_url_check("redis://u:s3cret@h:0", NULL, 0, err,
	    sizeof(err)) == -1 && strstr(err, "s3cret") == NULL &&
	    strncmp(err, "invalid --store URL: ", 21) == 0,
	    "the message names the option, never the password");

	breaker_init(&s, "g");
	s.generation = 41;
	text = state_text(&s);
	j = cJSON_Parse(text);
	is_int(cJSON_GetObjectItem(j, "generation")->valuedouble, 41,
	    "generation in the JSON");
	is_int(state_from_json(j, &t, err, sizeof(err)), 0, "read back");
	is_int(t.generation, 41, "the same generation");
	breaker_free(&t);
	cJSON_DeleteItemFromObject(j, "generation");
	is_int(state_from_json(j, &t, err, sizeof(err)), 0,
	    "an older state without it");
	is_int(t.generation, 0, "counts from 0");
	breaker_free(&t);
	cJSON_Delete(j);
	free(text);
	breaker_free(&s);
	return done_testing();
}
