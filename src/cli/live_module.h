/**
 * @file live_module.h
 * The interface between the program and the live module (libgpufir-live.so,
 * built from src/cli/live_entry.c and the static libraries below it).
 *
 * Why a module: the live side links PortAudio (with JACK and ALSA behind it)
 * and libsystemd (with libgcrypt, lz4, zstd, lzma). Linked into the program,
 * the dynamic loader would map and relocate them in every process, about
 * 3 ms per offline run that never uses them (docs/benchmarks.md). So the
 * program links none of them and dlopen()s the module for the two modes that
 * do (--live, --list-devices); every other mode never maps it.
 *
 * The module is self-contained: it carries its own copy of the layers it
 * needs and exports one symbol, gf_live_module_v1. Nothing but the command
 * line crosses: the module parses argv itself, so no state of the program's
 * copy (log level, caches) has to be shared, and the program hands over before
 * it has done anything but parse. Program and module must come from the same
 * build: the loader refuses a module of another ABI or version.
 *
 * Threads: main thread, once per process.
 */
#ifndef GPUFIR_LIVE_MODULE_H
#define GPUFIR_LIVE_MODULE_H

#include <stdint.h>

/** Bumped whenever struct gf_live_module changes; a module of another ABI is refused. */
#define GF_LIVE_MODULE_ABI 1
/** File name of the module; looked for beside the executable, then in the lib dir. */
#define GF_LIVE_MODULE_NAME "libgpufir-live.so"
/** Environment variable naming the module's path (tests, unusual installs). */
#define GF_LIVE_MODULE_ENV "GPUFIR_LIVE_MODULE"
/** Name of the module's entry point. */
#define GF_LIVE_MODULE_ENTRY "gf_live_module_v1"

/** What the module gives the program. */
struct gf_live_module {
	uint32_t abi;
	const char *version; /**< GPUFIR_VERSION of the build */
	/** Run gpufir's live modes (--live, --list-devices) from main()'s arguments. @return the exit status
	 */
	int (*run)(int argc, char **argv);
};

/** The module's entry point. */
typedef const struct gf_live_module *(*gf_live_module_entry_fn)(void);

/**
 * Load the module and run @p argc / @p argv there (the program's mode is
 * --live or --list-devices). @p what names the mode for the error message.
 * @return the module's exit status, or GF_EXIT_FAILURE with a message on
 * stderr ("live mode needs libgpufir-live.so: why") when it cannot be loaded.
 */
int gf_live_module_run(const char *what, int argc, char **argv);

#endif
