/*
 * Paths in a configuration: a file named relative to the config's folder,
 * the folder of a file, and the folders a guest's config may read from (the
 * config's own and every folder the file on disk reads from, realpath'ed:
 * gf_cfg_roots), which the pre-scan checks includes against
 * (config_scan.c) and the policy every other file (config_policy.c). A leaf
 * of the parser: it calls none of its other files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

char *gf_cfg_join_path(const char *dir, const char *file)
{
	if (file[0] == '/' || !dir || !dir[0])
		return strdup(file);
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, file);
	return p;
}

char *gf_cfg_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

struct gf_cfg_roots {
	char **dir; /* realpath'ed folders */
	uint32_t n;
};

/* Add the folder of @p path (realpath'ed), unless it cannot be resolved or is there already. */
static int roots_add_dir_of(struct gf_cfg_roots *r, const char *path)
{
	char *dir = gf_cfg_dir_of(path);
	char *real = dir ? realpath(dir, NULL) : NULL;
	free(dir);
	if (!real)
		return errno == ENOMEM ? GF_E_NOMEM : 0;
	for (uint32_t i = 0; i < r->n; i++)
		if (strcmp(r->dir[i], real) == 0) {
			free(real);
			return 0;
		}
	char **d = realloc(r->dir, (r->n + 1) * sizeof(*d));
	if (!d) {
		free(real);
		return GF_E_NOMEM;
	}
	r->dir = d;
	r->dir[r->n++] = real;
	return 0;
}

void gf_cfg_roots_free(struct gf_cfg_roots *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->n; i++)
		free(r->dir[i]);
	free(r->dir);
	free(r);
}

int gf_cfg_roots_new(const struct gf_config *disk, struct gf_cfg_roots **out)
{
	struct gf_cfg_roots *r = calloc(1, sizeof(*r));
	int err = r ? 0 : GF_E_NOMEM;
	if (!err && disk->path)
		err = roots_add_dir_of(r, disk->path);
	for (uint32_t i = 0; !err && i < disk->n_files; i++)
		err = roots_add_dir_of(r, disk->files[i]);
	if (err) {
		gf_cfg_roots_free(r);
		r = NULL;
	}
	*out = r;
	return err;
}

int gf_cfg_roots_allow(const struct gf_cfg_roots *r, const char *real)
{
	for (uint32_t i = 0; r && i < r->n; i++) {
		size_t n = strlen(r->dir[i]);
		if (strcmp(r->dir[i], "/") == 0 ||
		    (strncmp(real, r->dir[i], n) == 0 && (real[n] == '/' || real[n] == '\0')))
			return 1;
	}
	return 0;
}
