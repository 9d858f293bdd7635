/* The daemon's filter builds, on a build thread of their own: loading the
 * config, designing, converting to minimum phase, reading filter files,
 * pre-convolving chains and creating a new engine can take seconds, and the
 * control thread must keep pinging the watchdog, answering status queries and
 * honouring SIGTERM meanwhile (docs/live.md, "Builds").
 *
 * The build thread touches only its job: the config source (fixed for the
 * process), the running config (read only: the control thread replaces or
 * frees it only once the job is done) and what it makes. It ends by writing
 * the job's eventfd, which wakes the control loop. A build still running when
 * the daemon stops is abandoned, never joined without a deadline: its thread
 * and everything it reads are left alive, and the process ends with _exit. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_internal.h"
#include "deadline.h"
#include "error.h"
#include "log.h"
#include "reload.h"

#define BUILD_JOIN_MS 200 /* at exit: how long a running build may still take before it is abandoned */

/* A new engine (start-up, or a restart), from the filter set just made. */
static void build_engine(struct gf_dm_build *b)
{
	struct gf_engine_params p;
	gf_reload_engine_params(b->cfg, b->fs->taps, &p);
	if (b->force_cpu)
		p.backend = GF_BACKEND_CPU;
	b->err = gf_engine_new(&b->engine, &p, b->fs, &b->eb);
	gf_filter_set_free(b->fs);
	b->fs = NULL;
	if (b->err) {
		b->r.outcome = GF_RELOAD_FAILED;
		b->r.err = b->err;
		snprintf(b->r.text, sizeof(b->r.text), "reload failed: %s",
			 b->eb.msg[0] ? b->eb.msg : gf_strerror(b->err));
	}
}

static void *build_main(void *arg)
{
	struct gf_dm_build *b = arg;
	b->err = gf_reload_load_config(b->src, &b->cfg, &b->eb);
	if (b->err) {
		b->r.outcome = GF_RELOAD_FAILED;
		b->r.err = b->err;
		snprintf(b->r.text, sizeof(b->r.text), "reload failed: %s",
			 b->eb.msg[0] ? b->eb.msg : gf_strerror(b->err));
	} else {
		/* From here the config is only read: the control thread may read it too
		 * (at start-up: the status socket's path, the log level). */
		atomic_store_explicit(&b->loaded, b->cfg, memory_order_release);
		b->err = gf_reload_build(b->cfg, b->running, b->engine_running, &b->fs, &b->r);
		if (!b->err && b->r.outcome == GF_RELOAD_RESTART)
			build_engine(b);
	}
	atomic_store_explicit(&b->done, 1, memory_order_release);
	uint64_t one = 1;
	if (write(b->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		gf_warn("build: cannot wake the control loop: %s", strerror(errno)); /* it polls anyway */
	return NULL;
}

int gf_dm_build_start(struct daemon *d, const char *trigger)
{
	struct gf_dm_build *b = calloc(1, sizeof(*b));
	if (!b)
		return GF_E_NOMEM;
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		free(b);
		return GF_E_IO;
	}
	b->src = &d->o->src;
	b->running = d->cfg;
	b->engine_running = d->live != NULL && !d->engine_stuck;
	b->force_cpu = d->force_cpu;
	b->t0_ms = gf_now_ms();
	snprintf(b->trigger, sizeof(b->trigger), "%s", trigger);
	/* The signals stay blocked in the new thread (inherited mask): they reach the loop's signalfd. */
	int rc = pthread_create(&b->thread, NULL, build_main, b);
	if (rc != 0) {
		close(b->efd);
		free(b);
		return GF_E_NOMEM;
	}
	d->build = b;
	return 0;
}

int gf_dm_build_fd(const struct daemon *d)
{
	return d->build ? d->build->efd : -1;
}

struct gf_dm_build *gf_dm_build_take(struct daemon *d)
{
	struct gf_dm_build *b = d->build;
	if (!b || !atomic_load_explicit(&b->done, memory_order_acquire))
		return NULL;
	if (!b->swap_until_ms)		       /* a build waiting to swap was joined already */
		pthread_join(b->thread, NULL); /* it has written done: it is returning */
	d->build = NULL;
	return b;
}

void gf_dm_build_free(struct gf_dm_build *b)
{
	if (!b)
		return;
	gf_filter_set_free(b->fs);
	gf_engine_free(b->engine);
	gf_config_free(b->cfg);
	close(b->efd);
	free(b);
}

int gf_dm_build_abandon(struct daemon *d)
{
	struct gf_dm_build *b = d->build;
	if (!b)
		return 0;
	struct timespec ts = gf_deadline_in(CLOCK_REALTIME, BUILD_JOIN_MS * 1000000ull);
	if (b->swap_until_ms || pthread_timedjoin_np(b->thread, NULL, &ts) == 0) {
		d->build = NULL;
		gf_dm_build_free(b);
		return 0;
	}
	/* Still building: leave the thread, its job and what it reads (the running
	 * config, the source) alive; the process ends with _exit. */
	pthread_detach(b->thread);
	gf_notice("a filter build (%s, running %.1f s) was abandoned at exit", b->trigger,
		  (gf_now_ms() - b->t0_ms) / 1000.0);
	d->build = NULL;
	return 1;
}
