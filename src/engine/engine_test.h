/**
 * @file engine_test.h
 * A test hook of the engine (not for production use): stand-in backends, so
 * that tests without a GPU can play a GPU that is late, hangs, fails or comes
 * back, and watch what the engine does with the fallback.
 */
#ifndef GPUFIR_ENGINE_TEST_H
#define GPUFIR_ENGINE_TEST_H

#include "backend.h"

/**
 * Engines created from now on use @p primary wherever they would use the
 * CUDA backend (GF_BACKEND_CUDA, and AUTO, without a probe), and @p fallback
 * instead of the CPU backend for the fallback (NULL: the CPU backend). NULL
 * for @p primary: the real backends again. Control thread, before
 * gf_engine_new().
 */
void gf_engine_test_backends(const struct gf_backend_ops *primary, const struct gf_backend_ops *fallback);

#endif
