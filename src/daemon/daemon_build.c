/* The daemon's builds, on a build thread of their own: loading the config,
 * designing, converting to minimum phase, reading filter files, pre-convolving
 * chains and creating a new engine can take seconds, and the control thread
 * must keep pinging the watchdog, answering status queries and honouring
 * SIGTERM meanwhile (docs/daemon.md, "Builds off the control thread"). Every
 * engine the daemon makes is made here: at start-up, for a reload that
 * restarts the stream, and to replace an engine a stuck worker holds.
 *
 * The build thread runs one gf_reload_job (reload.c) and touches only it: the
 * config source (fixed for the process), the running config (read only: the
 * control thread replaces or frees it only once the job is done) and what it
 * makes. It ends by writing the job's eventfd, which wakes the control loop.
 * A build still running when the daemon stops is abandoned, never joined
 * without a deadline: its thread and everything it reads are left alive, and
 * the process ends with _exit. */
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

static void *build_main(void *arg)
{
	struct gf_dm_build *b = arg;
	gf_reload_job_run(&b->job); /* the whole reload path's slow half (reload.c) */
	atomic_store_explicit(&b->done, 1, memory_order_release);
	uint64_t one = 1;
	if (write(b->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		gf_warn("build: cannot wake the control loop: %s", strerror(errno)); /* it polls anyway */
	return NULL;
}

/* Run @p b's job on a new build thread; on success it is d->build. */
static int build_launch(struct daemon *d, struct gf_dm_build *b)
{
	atomic_store_explicit(&b->done, 0, memory_order_relaxed);
	/* The signals stay blocked in the new thread (inherited mask): they reach the loop's signalfd. */
	if (pthread_create(&b->thread, NULL, build_main, b) != 0)
		return GF_E_NOMEM;
	b->thread_live = 1;
	d->build = b;
	return 0;
}

/* A build of @p kind; @p text (RELOAD only, copied): the config's text, loaded as if from its file. */
static int build_start(struct daemon *d, enum gf_dm_build_kind kind, const char *trigger, const char *text)
{
	struct gf_dm_build *b = calloc(1, sizeof(*b));
	if (!b)
		return GF_E_NOMEM;
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0 || (text && !(b->text = strdup(text)))) {
		int rc = b->efd < 0 ? GF_E_IO : GF_E_NOMEM;
		if (b->efd >= 0)
			close(b->efd);
		free(b);
		return rc;
	}
	b->kind = kind;
	b->t0_ms = gf_now_ms();
	snprintf(b->trigger, sizeof(b->trigger), "%s", trigger);
	b->src = d->o->src;
	b->src.text = b->text;
	/* The running config is only read by the job: the control thread keeps it until the job is done. */
	if (kind == GF_DM_BUILD_ENGINE) {
		gf_reload_job_init(&b->job, NULL, d->cfg, 0, 1);
	} else {
		gf_dm_hum_for_build(d, &b->hum); /* the hum found so far, for notches with freq_hz = "auto" */
		b->src.hum = &b->hum;
		gf_reload_job_init(&b->job, &b->src, d->cfg, d->live != NULL && !d->engine_stuck,
				   d->force_cpu);
	}
	int rc = build_launch(d, b);
	if (rc != 0) {
		close(b->efd);
		free(b->text);
		free(b);
	}
	return rc;
}

int gf_dm_build_start(struct daemon *d, enum gf_dm_build_kind kind, const char *trigger)
{
	return build_start(d, kind, trigger, NULL);
}

int gf_dm_build_start_text(struct daemon *d, const char *trigger, const char *text)
{
	return build_start(d, GF_DM_BUILD_RELOAD, trigger, text);
}

int gf_dm_build_again(struct daemon *d, struct gf_dm_build *b)
{
	return build_launch(d, b);
}

const char *gf_dm_build_name(const struct gf_dm_build *b)
{
	return b->kind == GF_DM_BUILD_STARTUP  ? "start-up"
	       : b->kind == GF_DM_BUILD_RELOAD ? "reload"
					       : "engine";
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
	if (b->thread_live) /* else joined already: its swap waits for the running crossfade */
		pthread_join(b->thread, NULL); /* it has written done: it is returning */
	b->thread_live = 0;
	d->build = NULL;
	return b;
}

void gf_dm_build_free(struct gf_dm_build *b)
{
	if (!b)
		return;
	gf_reload_job_clear(&b->job);
	close(b->efd);
	free(b->text);
	free(b);
}

int gf_dm_build_abandon(struct daemon *d)
{
	struct gf_dm_build *b = d->build;
	if (!b)
		return 0;
	struct timespec ts = gf_deadline_in(CLOCK_REALTIME, BUILD_JOIN_MS * 1000000ull);
	if (!b->thread_live || pthread_timedjoin_np(b->thread, NULL, &ts) == 0) {
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
