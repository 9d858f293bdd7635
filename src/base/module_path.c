#include "module_path.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUFIR_LIBDIR_REL
#define GPUFIR_LIBDIR_REL "lib/gpufir"
#endif

/* The executable's folder, with a trailing '/', or "" if unknown. */
static void exe_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	dir[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	else
		dir[0] = '\0';
}

int gf_module_paths(const char *name, char paths[GF_MODULE_PATHS][GF_MODULE_PATH_MAX])
{
	char dir[PATH_MAX];
	exe_dir(dir, sizeof(dir));
	int n = 0;
	if (dir[0]) {
		snprintf(paths[n++], GF_MODULE_PATH_MAX, "%s%s", dir, name);
		snprintf(paths[n++], GF_MODULE_PATH_MAX, "%s../%s/%s", dir, GPUFIR_LIBDIR_REL, name);
	}
#ifdef GPUFIR_LIBDIR
	snprintf(paths[n++], GF_MODULE_PATH_MAX, "%s/%s", GPUFIR_LIBDIR, name);
#endif
	return n;
}
