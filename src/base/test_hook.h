/**
 * @file test_hook.h
 * The GPUFIR_FAULT_* test hooks' values (docs/engine.md): a whole number in
 * an environment variable that a test sets to make a component fail, hang
 * or run late on purpose. Read on the control thread when the component is
 * built, never on the audio path.
 */
#ifndef GPUFIR_TEST_HOOK_H
#define GPUFIR_TEST_HOOK_H

#include <stdint.h>

/** The whole number in @p name; -1 when unset, empty or not one (then a warning from @p who). */
int64_t gf_test_hook_value(const char *name, const char *who);

#endif
