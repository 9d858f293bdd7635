/**
 * @file liveutil.h
 * For the live tests that play the device themselves (gf_live_new_detached):
 * waiting for the real worker thread, and holding it still.
 */
#ifndef GPUFIR_TESTS_LIVEUTIL_H
#define GPUFIR_TESTS_LIVEUTIL_H

#include <sched.h>
#include <stdatomic.h>

#include "live_internal.h"
#include "testutil.h"

/**
 * Wait until the worker has filtered, and written out, every whole block of
 * @p block frames captured so far. Counted, not timed: the worker releases a
 * block's input before its output reaches the ring, and counts the block
 * only after that. Callbacks must be whole blocks (dropped ones included).
 */
static inline void gf_test_live_wait_idle(struct gf_live *l, uint32_t block)
{
	for (long i = 0;; i++) {
		uint64_t kept = atomic_load(&l->capture_pos) - atomic_load(&l->in_overflow);
		if (atomic_load(&l->blocks) >= kept / block)
			return;
		CHECK(i < 100000000L); /* seconds of spinning: the worker is stuck */
		sched_yield();
	}
}

/**
 * Stop the worker thread where it is until gf_test_live_release_worker(),
 * as a host that deschedules it would: callbacks played meanwhile find it
 * exactly as far behind as they make it, whatever the machine's load (one
 * worker held at a time). Returns once it has stopped.
 */
void gf_test_live_hold_worker(struct gf_live *l);

/** Let the worker held by gf_test_live_hold_worker() go on. */
void gf_test_live_release_worker(struct gf_live *l);

#endif
