/**
 * @file module_path.h
 * Where gpufir's loadable modules (libgpufir-cuda.so, libgpufir-live.so) are
 * looked for, in order: beside the executable (the build tree), in the lib
 * dir relative to it (a relocated install), at the configured install path.
 * An environment override, where a module has one, is the caller's.
 * Control thread (readlink of /proc/self/exe).
 */
#ifndef GPUFIR_MODULE_PATH_H
#define GPUFIR_MODULE_PATH_H

#include <limits.h>

#define GF_MODULE_PATHS 3
#define GF_MODULE_PATH_MAX (PATH_MAX + 64)

/** Fill @p paths with the candidates for module file @p name. @return how many (0..GF_MODULE_PATHS). */
int gf_module_paths(const char *name, char paths[GF_MODULE_PATHS][GF_MODULE_PATH_MAX]);

#endif
