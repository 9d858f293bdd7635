/**
 * @file test_hook.h
 * Test hooks (docs/engine.md, docs/cuda.md): an environment variable that a
 * test or a benchmark sets to make a component fail, hang or run late on
 * purpose, or to force one of its internal choices. These two functions are
 * the only place a component reads such a variable: the CUDA module reaches
 * them through its host (cuda_module.h). Read on the control thread when the
 * component is built, never on the audio path. Settings a user may want are
 * config keys, never hooks.
 */
#ifndef GPUFIR_TEST_HOOK_H
#define GPUFIR_TEST_HOOK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The whole number in @p name; -1 when unset, empty or not one (then a warning from @p who). */
int64_t gf_test_hook_value(const char *name, const char *who);

/**
 * Which of the @p n words in @p words @p name holds: its index; -1 when
 * unset or empty, or when it holds none of them (then a warning from
 * @p who naming the words).
 */
int gf_test_hook_choice(const char *name, const char *const *words, int n, const char *who);

#ifdef __cplusplus
}
#endif

#endif
