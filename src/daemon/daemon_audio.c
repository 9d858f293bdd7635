/* The daemon's PortAudio calls, off the control thread and bounded.
 *
 * Opening, starting, stopping and closing a stream can block inside PortAudio
 * for as long as the audio server takes to answer: against a JACK server that
 * is stopped (SIGSTOP) or hung, Pa_Initialize waits in jack_client_open and
 * Pa_AbortStream for a cycle that never comes, for minutes. On the control
 * thread that meant no status answer, no watchdog ping and SIGTERM not acted
 * on. So each such call runs on a helper thread of its own, and the control
 * thread waits for it in a poll loop that still reads signals, answers the
 * status socket and pings the watchdog (nothing else: no reload, no health
 * check, so no state changes under the caller). A call that outlives its
 * deadline (or, once the daemon stops, a short grace) is abandoned, never
 * joined without a deadline: its thread, its stream and the engine that
 * stream runs are left alive, and PortAudio is not called again in this
 * process image (daemon_stream.c: restart in place, or exit). */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_internal.h"
#include "log.h"

enum call_kind { CALL_OPEN, CALL_CLOSE };

/* One call: its inputs are fixed before the thread starts, its outputs read
 * once done is set. Everything it uses is its own (copies of the config's
 * strings), so an abandoned call needs nothing the control thread frees. */
struct audio_call {
	enum call_kind kind;
	pthread_t thread;
	int efd;	 /* written when done: in the wait's poll set */
	atomic_int done; /* release: the outputs are complete */
	struct gf_live_params lp;
	char *strings[5]; /* lp's strings, owned */
	struct gf_engine *engine;
	struct gf_live *live; /* CLOSE: the stream to stop; OPEN: the stream started */
	int err, worker_abandoned;
	struct gf_errbuf eb;
	int64_t slow_ms; /* OPEN: waits this long before starting the stream (a test hook) */
};

static void *call_main(void *arg)
{
	struct audio_call *c = arg;
	if (c->kind == CALL_OPEN) {
		c->err = gf_live_new(&c->live, &c->lp, c->engine, &c->eb);
		if (c->slow_ms > 0) { /* test hook: a server that answers late (daemon.c's read_test_hooks) */
			struct timespec ts = {c->slow_ms / 1000, (c->slow_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (!c->err && (c->err = gf_live_start(c->live, &c->eb))) {
			gf_live_free(c->live);
			c->live = NULL;
		}
	} else {
		gf_live_stop(c->live);
		c->worker_abandoned = gf_live_worker_abandoned(c->live);
		gf_live_free(c->live);
		c->live = NULL;
	}
	atomic_store_explicit(&c->done, 1, memory_order_release);
	uint64_t one = 1;
	if (write(c->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		gf_warn("audio: cannot wake the control loop: %s", strerror(errno)); /* it polls anyway */
	return NULL;
}

static void call_free(struct audio_call *c)
{
	for (size_t i = 0; i < sizeof(c->strings) / sizeof(c->strings[0]); i++)
		free(c->strings[i]);
	close(c->efd);
	free(c);
}

/* A copy of @p s into the call's strings (NULL stays NULL). @return 0, or -1 when out of memory. */
static int own(struct audio_call *c, int k, const char **s)
{
	if (!*s)
		return 0;
	c->strings[k] = strdup(*s);
	*s = c->strings[k];
	return *s ? 0 : -1;
}

static struct audio_call *call_new(enum call_kind kind, const struct gf_live_params *lp)
{
	struct audio_call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->kind = kind;
	if ((c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		free(c);
		return NULL;
	}
	if (lp)
		c->lp = *lp;
	if (own(c, 0, &c->lp.input.device) || own(c, 1, &c->lp.input.host_api) ||
	    own(c, 2, &c->lp.output.device) || own(c, 3, &c->lp.output.host_api) ||
	    own(c, 4, &c->lp.record_path)) {
		call_free(c);
		return NULL;
	}
	return c;
}

/* Serve the loop's duties until @p c is done or @p deadline_ms passes; a stop
 * request cuts the wait to @p grace_ms from then. @return 1 if done. */
static int call_wait(struct daemon *d, struct audio_call *c, int64_t deadline_ms, int grace_ms)
{
	int64_t stop_seen = 0;
	for (;;) {
		if (atomic_load_explicit(&c->done, memory_order_acquire))
			return 1;
		int64_t now = gf_now_ms();
		if (d->stop && !stop_seen) {
			stop_seen = now;
			if (now + grace_ms < deadline_ms)
				deadline_ms = now + grace_ms;
		}
		if (now >= deadline_ms)
			return 0;
		struct pollfd p[3] = {
			{.fd = d->sigfd, .events = POLLIN},
			{.fd = d->status ? gf_status_server_fd(d->status) : -1, .events = POLLIN},
			{.fd = c->efd, .events = POLLIN},
		};
		int64_t t = deadline_ms - now < LOOP_MS ? deadline_ms - now : LOOP_MS;
		if (poll(p, 3, (int)t) < 0 && errno != EINTR)
			return 0; /* cannot wait: treat as stuck, the caller abandons it */
		if (p[0].revents)
			gf_dm_signals_read(d);
		gf_dm_watchdog_ping(d, gf_now_ms());
		gf_dm_status_update(d, 0);
		gf_dm_status_recheck(d);
		if (d->status && p[1].revents)
			gf_dm_status_serve(d);
	}
}

/* Run @p c on its thread and wait for it. @return 1 if it finished (joined),
 * 0 if it was abandoned (its thread left running; @p c must stay allocated),
 * -1 if no thread could be started (nothing ran). */
static int call_run(struct daemon *d, struct audio_call *c, int deadline_ms, int grace_ms)
{
	int64_t t0 = gf_now_ms();
	if (pthread_create(&c->thread, NULL, call_main, c) != 0) /* signals stay blocked in it */
		return -1;
	if (call_wait(d, c, t0 + deadline_ms, grace_ms)) {
		pthread_join(c->thread, NULL); /* it has set done: it is returning */
		return 1;
	}
	pthread_detach(c->thread);
	gf_dm_audio_abandoned(d, c->kind == CALL_OPEN, gf_now_ms() - t0);
	return 0;
}

int gf_dm_audio_open(struct daemon *d, const struct gf_live_params *lp, struct gf_live **out,
		     struct gf_errbuf *eb)
{
	*out = NULL;
	struct audio_call *c = call_new(CALL_OPEN, lp);
	if (!c)
		return GF_E_NOMEM;
	c->engine = d->engine;
	int64_t deadline_ms = GF_DM_AUDIO_OPEN_MS;
	/* Test hook: the opens after the first N of this image are late. */
	if (d->late_open_after >= 0 && d->opens >= d->late_open_after) {
		deadline_ms = d->late_open_ms;
		c->slow_ms = 2 * d->late_open_ms;
	}
	d->opens++;
	int ran = call_run(d, c, (int)deadline_ms, GF_DM_AUDIO_GRACE_OPEN_MS);
	if (ran == 0) {
		gf_errbuf_set(eb,
			      "the audio stream did not open within %.1f s (the audio server does not "
			      "answer)",
			      deadline_ms / 1000.0);
		return GF_E_AUDIO; /* @p c stays with its thread */
	}
	if (ran < 0) {
		call_free(c);
		gf_errbuf_set(eb, "cannot start a thread to open the audio stream");
		return GF_E_SYSTEM;
	}
	int err = c->err;
	if (err)
		gf_errbuf_set(eb, "%s", c->eb.msg);
	*out = c->live;
	call_free(c);
	return err;
}

int gf_dm_audio_close(struct daemon *d, struct gf_live *l, int *worker_abandoned)
{
	struct audio_call *c = call_new(CALL_CLOSE, NULL);
	int ran = -1;
	if (c) {
		c->live = l;
		ran = call_run(d, c, GF_DM_AUDIO_CLOSE_MS, GF_DM_AUDIO_GRACE_CLOSE_MS);
	}
	if (ran == 0)
		return 0; /* @p c stays with its thread */
	if (ran < 0) {	  /* no memory or thread to spare: close here, as before */
		gf_live_stop(l);
		*worker_abandoned = gf_live_worker_abandoned(l);
		gf_live_free(l);
	} else {
		*worker_abandoned = c->worker_abandoned;
	}
	if (c)
		call_free(c);
	return 1;
}
