/**
 * @file strmap.h
 * String -> index map (open addressing, FNV-1a), for name lookups that must
 * stay linear in the number of names (a config with 40,000 filters). Keys
 * are borrowed: the caller keeps each key string alive and unchanged while
 * it is in the map. Not thread-safe; control threads (allocates).
 */
#ifndef GPUFIR_STRMAP_H
#define GPUFIR_STRMAP_H

#include <stdint.h>

struct gf_strmap;

/** @return 0 or GF_E_NOMEM */
int gf_strmap_new(struct gf_strmap **out);
/** Accepts NULL. */
void gf_strmap_free(struct gf_strmap *m);
/**
 * Map @p key to @p value unless it is there already.
 * @return 0 (inserted), 1 (present: its value in @p *existing when not NULL) or GF_E_NOMEM
 */
int gf_strmap_put(struct gf_strmap *m, const char *key, uint32_t value, uint32_t *existing);
/** @return 1 and the value in @p *value, or 0 when @p key is absent */
int gf_strmap_get(const struct gf_strmap *m, const char *key, uint32_t *value);

#endif
