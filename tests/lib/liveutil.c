/* Holding the live worker thread still, for tests (liveutil.h).
 *
 * A signal sent to the worker alone runs a handler on the worker's own
 * stack that blocks in read() on a pipe until the test writes a byte: the
 * worker stops wherever it was, as under a host that deschedules it, with no
 * hook in the code under test. read() and write() are async-signal-safe;
 * a wait the worker was in (its semaphore) returns early, which it handles
 * like any wake-up. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "liveutil.h"

#define HOLD_SIGNAL SIGUSR2

static int hold_pipe[2] = {-1, -1};
static atomic_int holding;

static void on_hold(int sig)
{
	(void)sig;
	int saved = errno;
	char c;
	atomic_store(&holding, 1);
	while (read(hold_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	atomic_store(&holding, 0);
	errno = saved;
}

static void wait_holding(int want)
{
	for (long i = 0; atomic_load(&holding) != want; i++) {
		CHECK(i < 100000000L); /* seconds of spinning: the signal never arrived */
		sched_yield();
	}
}

void gf_test_live_hold_worker(struct gf_live *l)
{
	if (hold_pipe[0] < 0) {
		CHECK(pipe(hold_pipe) == 0);
		struct sigaction sa = {.sa_handler = on_hold};
		sigemptyset(&sa.sa_mask);
		CHECK(sigaction(HOLD_SIGNAL, &sa, NULL) == 0);
	}
	CHECK(pthread_kill(l->worker, HOLD_SIGNAL) == 0);
	wait_holding(1);
}

void gf_test_live_release_worker(struct gf_live *l)
{
	(void)l;
	CHECK(write(hold_pipe[1], "", 1) == 1);
	wait_holding(0);
}
