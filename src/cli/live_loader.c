/*
 * Loading libgpufir-live.so for the live modes (live_module.h). Looked for
 * at $GPUFIR_LIVE_MODULE (exactly there when set), beside the executable
 * (the build tree), then in the lib dir relative to the executable and at the
 * configured install path: the same places as the CUDA module.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "live_module.h"
#include "log.h"
#include "module_path.h"

/* Open one path: the module's table, or NULL with the reason in why. */
static const struct gf_live_module *try_load(const char *path, char *why, size_t why_len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, why_len, "%s", e ? e : path);
		return NULL;
	}
	gf_live_module_entry_fn entry;
	*(void **)&entry = dlsym(h, GF_LIVE_MODULE_ENTRY);
	const struct gf_live_module *m = entry ? entry() : NULL;
	if (!m || m->abi != GF_LIVE_MODULE_ABI || !m->version || strcmp(m->version, GPUFIR_VERSION) != 0) {
		snprintf(why, why_len, "%.300s: not the live module of gpufir %s (ABI %d)", path,
			 GPUFIR_VERSION, GF_LIVE_MODULE_ABI);
		dlclose(h);
		return NULL;
	}
	gf_debug("live: loaded the live module from %s", path);
	return m; /* never unloaded: the process ends in it */
}

static const struct gf_live_module *find_and_load(char *why, size_t why_len)
{
	const char *env = getenv(GF_LIVE_MODULE_ENV);
	if (env && *env) {
		char e[400];
		const struct gf_live_module *m = try_load(env, e, sizeof(e));
		if (!m)
			snprintf(why, why_len, "%s=%.300s: %s", GF_LIVE_MODULE_ENV, env, e);
		return m;
	}
	char path[GF_MODULE_PATHS][GF_MODULE_PATH_MAX];
	int n = gf_module_paths(GF_LIVE_MODULE_NAME, path);
	why[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (access(path[i], F_OK) != 0)
			continue;
		const struct gf_live_module *m = try_load(path[i], why, why_len);
		if (m)
			return m;
		return NULL; /* found but broken (a missing libportaudio, say): say so, try no older copy */
	}
	snprintf(why, why_len, "not installed: not beside the program, nor in %.400s",
		 n ? path[n - 1] : "the lib dir");
	return NULL;
}

int gf_live_module_run(const char *what, int argc, char **argv)
{
	char why[1024];
	const struct gf_live_module *m = find_and_load(why, sizeof(why));
	if (!m) {
		gf_err("%s needs %s: %s", what, GF_LIVE_MODULE_NAME, why);
		return GF_EXIT_FAILURE;
	}
	return m->run(argc, argv);
}
