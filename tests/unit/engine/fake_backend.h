/*
 * A stand-in for the GPU backend (engine_test.h), for the engine's tests
 * without a GPU: the CPU backend's convolution behind calls that the test
 * makes late, hung or failing, creates that fail (a device not back yet), a
 * stop() that confirms the end of hung work or never does, and counters of
 * what the engine did with it (primes, on which thread; stops; destroys).
 */
#ifndef GPUFIR_TEST_FAKE_BACKEND_H
#define GPUFIR_TEST_FAKE_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"

#define FAKE_RULES 8

/* What the fake instance created n-th (from 0) does, by its own call number. */
struct fake_rule {
	long late_at; /* this call completes late_ns after its submit (-1: none) */
	uint64_t late_ns;
	long hang_at; /* from this call on, nothing completes until stop() (-1: never) */
	long fail_at; /* this call's submit fails with GF_E_CUDA (-1: none) */
	long busy_at; /* this call's submit answers GF_E_BUSY: not now (-1: none) */
};

struct fake_ctl {
	struct fake_rule rule[FAKE_RULES];
	_Atomic uint64_t base_ns; /* every call completes this long after its submit */
	atomic_int create_fails;  /* the next creates that fail: the device is not back */
	int stop_never;		  /* stop() never confirms that hung work ended */
	pthread_t audio;	  /* the test's audio thread, once audio_set */
	atomic_int audio_set;
	atomic_int creates, destroys, stops, primes, primes_on_audio;
};

extern struct fake_ctl g_fake;
extern const struct gf_backend_ops fake_backend;

/* No rules, no failures, counters zero. */
void fake_reset(void);
/* From now on, prime() calls from the calling thread are counted as on the audio thread. */
void fake_mark_audio_thread(void);

#endif
