/* PatchConfig's JSON object written as libconfig settings (api_patch.c). */
#ifndef GPUFIR_API_PATCH_H
#define GPUFIR_API_PATCH_H

#include <jansson.h>
#include <stdint.h>

#include "error.h"

/** 1 if @p k is a name libconfig accepts for a setting. */
int gf_api_patch_name_ok(const char *k);

/**
 * @p obj's members as "key = value;" lines in *@p text (malloc'ed) and their
 * names in *@p keys (malloc'ed array of @p obj's strings: valid while @p obj is).
 * @return 0, GF_E_INVAL (why in @p eb), GF_E_TOOLONG or GF_E_NOMEM
 */
int gf_api_patch_text(const json_t *obj, char **text, const char ***keys, uint32_t *n, struct gf_errbuf *eb);

#endif
