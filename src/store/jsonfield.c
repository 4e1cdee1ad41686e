/* SPDX-License-Identifier: ISC */
/*
 * Typed reads of single values of a cJSON object, for loading a document
 * (the rows of schema.c, and the members inside a member that
 * stateparse.c and account.c read themselves).
 *
 * Each reader takes the field name to use in an error
 * ("history[3].iteration"), so a bad hand-edited file is named down to
 * the field: "field 'F': expected a non-negative integer".  jv_* read a
 * value; get_* read o[key], where an absent member leaves the destination
 * as it was and is not an error.  Numbers are doubles in
 * JSON: get_num checks the range before any cast and refuses fractions
 * where an integer is due, and get_long stops at 2^53, past which a double
 * no longer holds every integer.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "jsonfield.h"

/* Integers travel as JSON numbers (doubles): exact up to 2^53. */
#define MAX_EXACT	9007199254740992.0

/*
 * o[key], the first member of that name, as cJSON_GetObjectItemCaseSensitive
 * finds it, but comparing the first byte before calling strcmp: a history
 * event's dozen lookups were a fifth of loading a state.
 */
const cJSON *
member(const cJSON *o, const char *key)
{
	const cJSON *c;

	if (o == NULL)
		return NULL;
	for (c = o->child; c != NULL; c = c->next)
		if (c->string != NULL && c->string[0] == key[0] &&
		    strcmp(c->string, key) == 0)
			return c;
	return NULL;
}

int
bad_field(char *err, size_t errlen, const char *field, const char *want)
{
	snprintf(err, errlen, "field '%s': expected %s", field, want);
	return -1;
}

/*
 * The value j (not NULL) read as the type; field is the name used in the
 * error.
 */
int
jv_num(const cJSON *j, const char *field, double min, double max,
    int integral, double *v, char *err, size_t errlen)
{
	const char *want;
	double d;

	want = !integral ? "a non-negative number" :
	    min >= 0 ? "a non-negative integer" : "an integer";
	if (!cJSON_IsNumber(j))
		return bad_field(err, errlen, field, want);
	d = j->valuedouble;
	/* The range test comes first so the cast below is defined. */
	if (!(d >= min && d <= max) ||
	    (integral && d != (double)(long long)d))
		return bad_field(err, errlen, field, want);
	*v = d;
	return 0;
}

int
jv_int(const cJSON *j, const char *field, int *v, char *err, size_t errlen)
{
	double d = *v;

	if (jv_num(j, field, 0, INT_MAX, 1, &d, err, errlen) == -1)
		return -1;
	*v = (int)d;
	return 0;
}

int
jv_long(const cJSON *j, const char *field, long *v, char *err,
    size_t errlen)
{
	double d = (double)*v;

	if (jv_num(j, field, 0, MAX_EXACT, 1, &d, err, errlen) == -1)
		return -1;
	*v = (long)d;
	return 0;
}

/* A string or null into a malloc'd *v (NULL for null). */
int
jv_str(const cJSON *j, const char *field, char **v, char *err,
    size_t errlen)
{
	if (cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j))
		return bad_field(err, errlen, field, "a string or null");
	if ((*v = strdup(j->valuestring)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A string that must fit buf (the struct's fixed-size fields); null
 * leaves it. */
int
jv_buf(const cJSON *j, const char *field, char *buf, size_t size,
    char *err, size_t errlen)
{
	if (cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j))
		return bad_field(err, errlen, field, "a string");
	if (strlen(j->valuestring) >= size) {
		snprintf(err, errlen, "field '%s': longer than %zu bytes",
		    field, size - 1);
		return -1;
	}
	strcpy(buf, j->valuestring);
	return 0;
}

/* An ISO-8601 timestamp, or with nullable null (which leaves *t). */
int
jv_time(const cJSON *j, const char *field, int nullable, double *t,
    char *err, size_t errlen)
{
	if (nullable && cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j) || iso8601_parse(j->valuestring, t) == -1)
		return bad_field(err, errlen, field, nullable ?
		    "an ISO-8601 timestamp or null" : "an ISO-8601 timestamp");
	return 0;
}

/* The same at o[key]: absent leaves the destination as it was. */
int
get_num(const cJSON *o, const char *key, const char *field, double min,
    double max, int integral, double *v, char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_num(j, field, min, max, integral, v, err,
	    errlen);
}

int
get_int(const cJSON *o, const char *key, const char *field, int *v,
    char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_int(j, field, v, err, errlen);
}

int
get_long(const cJSON *o, const char *key, const char *field, long *v,
    char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_long(j, field, v, err, errlen);
}

int
get_str(const cJSON *o, const char *key, const char *field, char **v,
    char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_str(j, field, v, err, errlen);
}

int
get_buf(const cJSON *o, const char *key, const char *field, char *buf,
    size_t size, char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_buf(j, field, buf, size, err, errlen);
}

int
get_time(const cJSON *o, const char *key, const char *field, int nullable,
    double *t, char *err, size_t errlen)
{
	const cJSON *j = member(o, key);

	return j == NULL ? 0 : jv_time(j, field, nullable, t, err, errlen);
}
