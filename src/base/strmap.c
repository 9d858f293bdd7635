/* Linear probing over a power-of-two table kept at most half full. */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

struct slot {
	const char *key; /* NULL: empty */
	uint64_t hash;
	uint32_t value;
};

struct gf_strmap {
	struct slot *t;
	size_t cap, n; /* cap: a power of two */
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int gf_strmap_new(struct gf_strmap **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return GF_E_NOMEM;
	(*out)->cap = 64;
	if (!((*out)->t = calloc((*out)->cap, sizeof(struct slot)))) {
		free(*out);
		*out = NULL;
		return GF_E_NOMEM;
	}
	return 0;
}

void gf_strmap_free(struct gf_strmap *m)
{
	if (!m)
		return;
	free(m->t);
	free(m);
}

static struct slot *find(const struct gf_strmap *m, const char *key, uint64_t h)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->t[i];
		if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
			return s;
	}
}

static int grow(struct gf_strmap *m)
{
	struct gf_strmap bigger = {calloc(m->cap * 2, sizeof(struct slot)), m->cap * 2, m->n};
	if (!bigger.t)
		return GF_E_NOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->t[i].key)
			*find(&bigger, m->t[i].key, m->t[i].hash) = m->t[i];
	free(m->t);
	*m = bigger;
	return 0;
}

int gf_strmap_put(struct gf_strmap *m, const char *key, uint32_t value, uint32_t *existing)
{
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return GF_E_NOMEM;
	uint64_t h = fnv1a(key);
	struct slot *s = find(m, key, h);
	if (s->key) {
		if (existing)
			*existing = s->value;
		return 1;
	}
	*s = (struct slot){key, h, value};
	m->n++;
	return 0;
}

int gf_strmap_get(const struct gf_strmap *m, const char *key, uint32_t *value)
{
	const struct slot *s = find(m, key, fnv1a(key));
	if (!s->key)
		return 0;
	*value = s->value;
	return 1;
}
