/* PatchConfig's argument, a JSON object of top-level settings, written as
 * libconfig settings ("key = value;"): numbers, strings, booleans, arrays of
 * scalars ([...]), groups ({...}) and lists ((...), from a JSON array of
 * anything else). JSON null has no libconfig form and is refused, as are
 * names libconfig would not accept. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_patch.h"

#define PATCH_MAX_DEPTH 16

struct out {
	char *buf;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->err)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		while (cap < o->len + n + 1)
			cap *= 2;
		if (cap > GF_API_MAX_MSG * 2) {
			o->err = GF_E_TOOLONG;
			return;
		}
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->err = GF_E_NOMEM;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

int gf_api_patch_name_ok(const char *k)
{
	if (!k || !(isalpha((unsigned char)k[0]) || k[0] == '*'))
		return 0;
	for (const char *p = k; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '*')
			return 0;
	return strlen(k) <= 128;
}

static void put_string(struct out *o, const char *s)
{
	puts_(o, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		if (*p == '"' || *p == '\\')
			snprintf(esc, sizeof(esc), "\\%c", *p);
		else if (*p < 0x20)
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		else
			snprintf(esc, sizeof(esc), "%c", *p);
		puts_(o, esc);
	}
	puts_(o, "\"");
}

static int is_scalar(const json_t *v)
{
	return json_is_number(v) || json_is_string(v) || json_is_boolean(v);
}

static int put_value(struct out *o, const json_t *v, int depth, char *why, size_t len);

static int put_array(struct out *o, const json_t *v, int depth, char *why, size_t len)
{
	size_t i, n = json_array_size(v);
	json_t *e;
	int scalars = 1;
	json_array_foreach(v, i, e) scalars &= is_scalar(e);
	puts_(o, scalars ? "[" : "(");
	json_array_foreach(v, i, e)
	{
		if (i)
			puts_(o, ", ");
		if (put_value(o, e, depth + 1, why, len) < 0)
			return -1;
	}
	(void)n;
	puts_(o, scalars ? "]" : ")");
	return 0;
}

static int put_value(struct out *o, const json_t *v, int depth, char *why, size_t len)
{
	char num[40];
	if (depth > PATCH_MAX_DEPTH) {
		snprintf(why, len, "nested deeper than %d levels", PATCH_MAX_DEPTH);
		return -1;
	}
	if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		puts_(o, num);
	} else if (json_is_real(v)) {
		/* Always with a point or exponent: libconfig reads "1" as an integer. */
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		puts_(o, num);
		if (!strpbrk(num, ".eEn"))
			puts_(o, ".0");
	} else if (json_is_string(v)) {
		put_string(o, json_string_value(v));
	} else if (json_is_boolean(v)) {
		puts_(o, json_is_true(v) ? "true" : "false");
	} else if (json_is_array(v)) {
		return put_array(o, v, depth, why, len);
	} else if (json_is_object(v)) {
		const char *k;
		json_t *e;
		puts_(o, "{ ");
		json_object_foreach((json_t *)v, k, e)
		{
			if (!gf_api_patch_name_ok(k)) {
				snprintf(why, len, "\"%.100s\" is not a libconfig setting name", k);
				return -1;
			}
			puts_(o, k);
			puts_(o, " = ");
			if (put_value(o, e, depth + 1, why, len) < 0)
				return -1;
			puts_(o, "; ");
		}
		puts_(o, "}");
	} else {
		snprintf(why, len,
			 "null has no libconfig form (to remove a setting, leave it out of a SetConfig)");
		return -1;
	}
	return 0;
}

int gf_api_patch_text(const json_t *obj, char **text, const char ***keys, uint32_t *n, struct gf_errbuf *eb)
{
	struct out o = {0};
	char why[200] = "";
	size_t count = json_object_size(obj), i = 0;
	*text = NULL;
	*keys = NULL;
	*n = 0;
	if (count == 0) {
		gf_errbuf_set(eb, "PatchConfig takes an object of one or more top-level settings");
		return GF_E_INVAL;
	}
	const char **ks = calloc(count, sizeof(*ks));
	if (!ks)
		return GF_E_NOMEM;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (!gf_api_patch_name_ok(k)) {
			gf_errbuf_set(eb, "PatchConfig: \"%.100s\" is not a libconfig setting name", k);
			goto fail;
		}
		ks[i++] = k;
		puts_(&o, k);
		puts_(&o, " = ");
		if (put_value(&o, v, 0, why, sizeof(why)) < 0) {
			gf_errbuf_set(eb, "PatchConfig: %s: %s", k, why);
			goto fail;
		}
		puts_(&o, ";\n");
	}
	if (o.err) {
		gf_errbuf_set(eb, "PatchConfig: %s", gf_strerror(o.err));
		free(ks);
		free(o.buf);
		return o.err;
	}
	*text = o.buf;
	*keys = ks;
	*n = (uint32_t)count;
	return 0;
fail:
	free(ks);
	free(o.buf);
	return GF_E_INVAL;
}
