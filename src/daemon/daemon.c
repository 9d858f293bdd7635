/* The live daemon's control loop. One thread (the caller's) owns every control
 * object: config, engine, live stream, file watch, status socket. It sleeps in
 * poll() on a signalfd, the inotify descriptor and the status socket, waking at
 * least every LOOP_MS to check the audio path's health, ping the watchdog and
 * log stats. Audio itself runs on the live module's threads and never waits
 * for anything here. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_internal.h"
#include "error.h"
#include "log.h"
#include "reload.h"
#include "test_hook.h"

static void apply_log_level(const struct gf_config *c)
{
	if (c->log_level >= GF_LOG_ERR && c->log_level <= GF_LOG_DEBUG)
		gf_log_set_level(c->log_level);
}

/* ---- signals ----------------------------------------------------------- */

void gf_daemon_ignore_sigxfsz(void)
{
	signal(SIGXFSZ, SIG_IGN); /* a write past RLIMIT_FSIZE is then EFBIG: the recorder's error */
}

/* Block the signals in this thread before any other thread exists, so every
 * thread (PortAudio, JACK, engine workers) inherits the mask and they arrive
 * only through the signalfd. */
static int signals_open(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	gf_daemon_ignore_sigxfsz();
	if (pthread_sigmask(SIG_BLOCK, &set, old) != 0)
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* ---- reload ------------------------------------------------------------ */

/* A reload's stream restart failed: "reload failed: " and why. */
__attribute__((format(printf, 3, 4))) static void restart_failed(struct gf_reload_result *r, int err,
								 const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->text, sizeof(r->text), "reload failed: ");
	va_start(ap, fmt);
	vsnprintf(r->text + n, sizeof(r->text) - (size_t)n, fmt, ap);
	va_end(ap);
	r->outcome = GF_RELOAD_FAILED;
	r->err = err;
}

/* A reload's stream restart met a PortAudio call that did not return: the
 * daemon restarts in place (gf_dm_audio_abandoned), and the new image loads
 * the config from the file. */
static void audio_stuck_result(struct gf_reload_result *r, const char *what)
{
	restart_failed(r, GF_E_AUDIO,
		       "%s (the audio server does not answer); gpufir restarts in place with the new "
		       "configuration",
		       what);
}

/* Replace engine and stream with @p ne and @p next (both owned; the engine was
 * built on the build thread, with its suppressor @p ns, owned too, NULL for
 * none). Audio stops only now, for a config whose filters and engine are
 * known to be good; if the new stream cannot start, the old settings are
 * restored. Fills @p r's outcome and text. */
static void restart_with(struct daemon *d, struct gf_config *next, struct gf_engine *ne,
			 struct gf_suppress_bank *ns, const char *why, struct gf_reload_result *r)
{
	struct gf_errbuf eb = {{0}};
	gf_notice("restarting audio stream: %s", why);
	int was_running = d->live != NULL;
	gf_dm_stream_stop(d);
	if (d->audio_stuck) { /* the old stream did not close: the new image loads the new config */
		gf_engine_free(ne);
		gf_suppress_bank_free(ns);
		gf_config_free(next);
		audio_stuck_result(r, "the audio stream did not stop");
		return;
	}
	/* A worker abandoned now (or before) keeps its engine and suppressor: never
	 * freed; @p ne and @p ns replace them. */
	int stuck = d->engine_stuck;
	struct gf_config *oc = d->cfg;
	struct gf_engine *oe = d->engine;
	struct gf_suppress_bank *os = d->suppress;
	struct gf_suppress_live live[GF_API_STAGES]; /* the API's, which the new config may drop */
	memcpy(live, d->stage_live, sizeof(live));
	d->cfg = next;
	d->engine = ne;
	d->suppress = ns;
	d->engine_stuck = 0;
	gf_dm_suppress_reload(d, oc); /* the new bank takes the live controls before it starts */
	int err = gf_dm_stream_start(d, &eb);
	if (d->audio_stuck) { /* the open was left behind with @p ne, which stays d->engine */
		if (!stuck) {
			gf_engine_free(oe);
			gf_suppress_bank_free(os);
		}
		gf_config_free(oc);
		audio_stuck_result(r, "the new audio stream did not open");
		return;
	}
	if (!err || !was_running) {
		/* Started, or nothing was running before: keep the new settings either way. */
		if (!stuck) {
			gf_engine_free(oe);
			gf_suppress_bank_free(os);
		}
		gf_config_free(oc);
		snprintf(r->text, sizeof(r->text), "stream restarted: %.600s%s%s", why, err ? "; " : "",
			 err ? "audio not running yet" : "");
		if (err && d->state != D_LOST)
			gf_dm_device_lost(d, eb.msg[0] ? eb.msg : gf_strerror(err), 1);
		return;
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_engine_free(ne);
	gf_suppress_bank_free(ns);
	gf_config_free(next);
	d->cfg = oc;
	d->engine = oe;
	d->suppress = os;
	memcpy(d->stage_live, live, sizeof(live)); /* the previous settings: the API's too */
	gf_dm_suppress_reload(d, NULL);
	d->engine_stuck = stuck; /* then the restart below waits for its replacement (an outage) */
	restart_failed(r, err, "new stream settings did not start (%s); kept the previous settings", msg);
	eb.msg[0] = '\0';
	if (gf_dm_stream_start(d, &eb) != 0)
		gf_dm_device_lost(d, eb.msg[0] ? eb.msg : "previous settings did not restart", 1);
}

static void watch_config_files(struct daemon *d)
{
	struct gf_errbuf eb = {{0}};
	if (!d->watch)
		return;
	if (gf_watch_set_files(d->watch, d->cfg->files, d->cfg->n_files, &eb) != 0 || eb.msg[0])
		gf_warn("%s", eb.msg[0] ? eb.msg : "cannot watch the config files");
}

/* The new filters run: their plot replaces the old one (none drawn: none served). */
static void take_plot(struct daemon *d, struct gf_reload_job *j)
{
	free(d->plot_svg);
	d->plot_svg = j->plot_svg;
	d->plot_len = j->plot_len;
	j->plot_svg = NULL;
}

/* The end of a reload, whatever its outcome: count it, say it, READY=1. */
static void reload_done(struct daemon *d, const struct gf_reload_result *r, int64_t t0)
{
	d->reloads++;
	d->last_reload_ms = gf_now_ms();
	snprintf(d->last_reload, sizeof(d->last_reload), "%s", r->text);
	gf_str_printable(d->last_reload); /* one line of the status block, whatever the path holds */
	if (r->outcome == GF_RELOAD_FAILED) {
		d->reload_failures++;
		gf_err("%s (the running filter is unchanged)", r->text);
	} else {
		apply_log_level(d->cfg);
		watch_config_files(d);
		gf_dm_status_open(d);
		gf_notice("%s (%lld ms)", r->text, (long long)(gf_now_ms() - t0));
	}
	if (d->ready_sent)
		gf_notify_ready(); /* after failures too, or systemd stays in "reloading" */
	gf_dm_status_update(d, 1);
	gf_dm_api_reload_done(d, r);
}

/* Start a reload: the build runs on the build thread; reload_finish() takes it. */
void gf_dm_reload_begin(struct daemon *d, const char *trigger, const char *text)
{
	gf_info("reloading configuration (%s)", trigger);
	if (d->ready_sent)
		gf_notify_reloading();
	int err = gf_dm_build_start_text(d, trigger, text);
	if (err) {
		struct gf_reload_result r = {.outcome = GF_RELOAD_FAILED, .err = err};
		snprintf(r.text, sizeof(r.text), "reload failed: cannot start a build thread: %s",
			 gf_strerror(err));
		reload_done(d, &r, gf_now_ms());
		return;
	}
	gf_dm_status_update(d, 1);
}

/* A reload's job is done (reload.c decides what next, given the state now):
 * swap its filter in, restart the stream on its engine, or have the build
 * thread make the engine it now needs. @return 1 while the reload goes on: its
 * swap waits for the running crossfade (gf_reload_job_swap's retry policy), or
 * its engine is being built; the loop comes back on a later pass, answering
 * signals, the watchdog and status meanwhile. */
static int reload_finish(struct daemon *d, struct gf_dm_build *b)
{
	struct gf_reload_job *j = &b->job;
	switch (gf_reload_job_next(j, d->live != NULL && !d->engine_stuck, d->force_cpu)) {
	case GF_RELOAD_NEXT_SWAP:
		if (gf_reload_job_swap(j, d->engine, gf_now_ms()))
			return 1;
		if (j->r.outcome == GF_RELOAD_APPLIED) {
			struct gf_config *old = d->cfg;
			d->cfg = j->cfg;
			j->cfg = NULL;
			gf_dm_suppress_reload(d, old); /* reduction_db, bypass: live, ramped */
			gf_config_free(old);
		}
		break;
	case GF_RELOAD_NEXT_ENGINE:
		if ((j->r.err = gf_dm_build_again(d, b)) == 0)
			return 1;
		j->r.outcome = GF_RELOAD_FAILED;
		snprintf(j->r.text, sizeof(j->r.text), "reload failed: cannot start a build thread: %s",
			 gf_strerror(j->r.err));
		break;
	case GF_RELOAD_NEXT_RESTART: {
		const char *pre = "stream restart needed: ";
		char why[sizeof(j->r.text)];
		snprintf(why, sizeof(why), "%s", j->r.text + strlen(pre));
		restart_with(d, j->cfg, j->engine, j->suppress, why, &j->r);
		j->cfg = NULL;
		j->engine = NULL;
		j->suppress = NULL;
		break;
	}
	case GF_RELOAD_NEXT_REPORT:
		break;
	}
	if (j->r.outcome != GF_RELOAD_FAILED)
		take_plot(d, j);
	gf_dm_hum_built(d, &b->hum);
	reload_done(d, &j->r, b->t0_ms);
	return 0;
}

/* ---- main loop --------------------------------------------------------- */

/* Drain the signalfd into flags: whatever arrives, this returns after one
 * read per queued signal, and the work they ask for runs below, bounded per
 * loop pass (a storm of SIGHUPs must not keep the loop from its timers). */
void gf_dm_signals_read(struct daemon *d)
{
	struct signalfd_siginfo si;
	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			d->hups++;
			d->hup_pending = 1;
		} else if (!d->stop) {
			gf_notice("%s received, stopping", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			d->stop = 1;
			d->exit_code = GF_EXIT_OK;
		}
	}
}

/* Ping now if a ping falls due within WD_EARLY_MS. Early is harmless to
 * systemd; late is what kills the service. */
void gf_dm_watchdog_ping(struct daemon *d, int64_t now)
{
	const int64_t early_ms = WD_EARLY_MS;
	/* Ping while audio flows, and while retrying an outage of known cause
	 * (STATUS= says so); see the policy above struct daemon. */
	int retrying = d->state != D_RUNNING && d->lost_at_ms && d->lost_known;
	/* A filter build is progress of known cause too, up to a bound: one that
	 * never ends stops the pings, and systemd's watchdog restarts the service.
	 * Not the replacement of a stuck worker's engine: that outage's cause is
	 * unknown, and it pings only once audio flows again. */
	int building =
		d->build && d->build->kind != GF_DM_BUILD_ENGINE && now - d->build->t0_ms < BUILD_PING_MAX_MS;
	if (!d->wd_usec || !(d->healthy || retrying || building) || now + early_ms < d->next_wd_ms)
		return;
	gf_notify_watchdog();
	/* On a fixed grid, so that loop latency does not stretch the interval;
	 * an early ping restarts the grid from now. */
	int64_t half = (int64_t)(d->wd_usec / 2000u);
	if (now < d->next_wd_ms)
		d->next_wd_ms = now + half;
	else
		d->next_wd_ms = d->next_wd_ms + half > now ? d->next_wd_ms + half : now + half;
}

/* At most one reload at a time. SIGHUPs are throttled: the first one reloads
 * at once, those that arrive during a reload (its build) or within
 * DEBOUNCE_MS of its end coalesce into one more reload when the interval is
 * over (a SIGHUP that came after a reload read the files may mean newer
 * files). File changes come debounced from the watch, and wait likewise while
 * a build runs. */
static void reload_due(struct daemon *d)
{
	int64_t now = gf_now_ms();
	const char *changed = NULL;
	char trig[600];
	if (d->build)
		return;
	if (d->hup_pending && now >= d->next_hup_ms) {
		snprintf(trig, sizeof(trig), "SIGHUP%s", d->hups > 1 ? "s, coalesced" : "");
		if (d->hups > 1)
			gf_info("%" PRIu64 " SIGHUPs since the last reload: one reload", d->hups);
		d->hup_pending = 0;
		d->hups = 0;
	} else if (d->watch && gf_watch_take(d->watch, &changed)) {
		snprintf(trig, sizeof(trig), "%.500s changed", changed);
	} else if (!gf_dm_hum_due(d, trig, sizeof(trig))) { /* the hum found changed: notches follow */
		return;
	}
	gf_dm_reload_begin(d, trig, NULL);
}

static void timers(struct daemon *d)
{
	int64_t now = gf_now_ms();
	if (d->healthy && d->state == D_RUNNING && d->ready_pending) {
		gf_notify_ready(); /* again after an outage: harmless under Type=notify */
		gf_notice("%s", d->ready_sent ? "ready again: audio flows" : "ready: audio flows");
		d->ready_sent = 1;
		d->ready_pending = 0;
	}
	gf_dm_watchdog_ping(d, now);
	if (d->stats_every_ms > 0 && now >= d->next_stats_ms) {
		d->next_stats_ms = now + d->stats_every_ms;
		gf_dm_stats_log(d);
	}
	gf_dm_status_update(d, 0);
	gf_dm_status_recheck(d);
	if (!d->engine_stuck) /* a stuck worker's engine is never run or changed again */
		gf_engine_reap(d->engine);
}

static int poll_timeout(const struct daemon *d)
{
	int64_t t = LOOP_MS, now = gf_now_ms();
	if (d->build && d->build->job.swap_until_ms)
		t = GF_RELOAD_SWAP_RETRY_MS; /* a swap waits for the running crossfade to end */
	if (gf_notify_pending() && NOTIFY_RETRY_MS < t)
		t = NOTIFY_RETRY_MS; /* systemd's queue was full: try again soon */
	/* While a build runs, pending reloads wait for its eventfd, not a timer. */
	int w = d->watch && !d->build ? gf_watch_timeout_ms(d->watch) : -1;
	if (w >= 0 && w < t)
		t = w;
	if (d->wd_usec && d->next_wd_ms - WD_EARLY_MS - now < t)
		t = d->next_wd_ms - WD_EARLY_MS - now;
	if (d->hup_pending && !d->build && d->next_hup_ms - now < t)
		t = d->next_hup_ms - now;
	return t < 0 ? 0 : (int)t;
}

static int startup_finish(struct daemon *d, struct gf_dm_build *b);

/* The build thread's news: the start-up config loaded (its status socket can
 * answer now), or a build done. */
static void build_progress(struct daemon *d)
{
	struct gf_dm_build *b = d->build;
	if (!b)
		return;
	struct gf_config *loaded = atomic_load_explicit(&b->job.loaded, memory_order_acquire);
	if (b->kind == GF_DM_BUILD_STARTUP && !d->cfg && loaded) {
		d->cfg = loaded; /* shared, read-only, until the build is done; then d->cfg owns it */
		apply_log_level(d->cfg);
		gf_dm_status_open(d);
	}
	uint64_t n;
	if (read(b->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		gf_warn("build: eventfd: %s", strerror(errno));
	if (!(b = gf_dm_build_take(d)))
		return;
	if (b->kind == GF_DM_BUILD_STARTUP) {
		int rc = startup_finish(d, b);
		if (rc != GF_EXIT_OK) {
			if (!d->stop) /* else SIGTERM during the stream's start: its exit code stands */
				d->exit_code = rc;
			d->stop = 1;
		}
	} else if (b->kind == GF_DM_BUILD_ENGINE) {
		gf_dm_engine_replaced(d, b);
	} else {
		if (reload_finish(d, b)) {
			d->build = b; /* its swap waits, or its engine is being built: back next pass */
			return;
		}
		d->next_hup_ms = gf_now_ms() + d->debounce_ms;
	}
	gf_dm_build_free(b);
}

static void loop(struct daemon *d)
{
	while (!d->stop) {
		struct pollfd p[4 + GF_API_POLLFDS] = {
			{.fd = d->sigfd, .events = POLLIN},
			{.fd = d->watch ? gf_watch_fd(d->watch) : -1, .events = POLLIN},
			{.fd = d->status ? gf_status_server_fd(d->status) : -1, .events = POLLIN},
			{.fd = gf_dm_build_fd(d), .events = POLLIN},
		};
		int n = 4 + gf_dm_api_pollfds(d, p + 4, GF_API_POLLFDS);
		if (poll(p, (nfds_t)n, gf_dm_api_timeout(d, poll_timeout(d))) < 0 && errno != EINTR) {
			gf_err("poll: %s", strerror(errno));
			d->exit_code = GF_EXIT_FAILURE;
			break;
		}
		if (p[0].revents)
			gf_dm_signals_read(d);
		if (d->stop)
			break;
		gf_notify_flush(); /* what systemd's full queue kept back */
		build_progress(d);
		if (d->stop)
			break;
		if (p[1].revents)
			gf_watch_read(d->watch);
		if (!d->engine) { /* the start-up build runs: no stream yet */
			gf_dm_watchdog_ping(d, gf_now_ms());
			gf_dm_status_update(d, 0);
			gf_dm_status_recheck(d);
			gf_dm_sockets_serve(d, p, n);
			continue;
		}
		gf_dm_engine_replace_due(d); /* before a reload: audio waits for it */
		reload_due(d);
		d->healthy = gf_dm_health_check(d);
		if (d->stop)
			break;
		gf_dm_latency_check(d);
		gf_dm_hum_poll(d);
		timers(d);
		gf_dm_sockets_serve(d, p, n);
	}
}

/* ---- start and stop ---------------------------------------------------- */

/* The start-up build is done: take its engine, start the stream (or carry on
 * with the outage an in-place restart handed over), watch the files.
 * @return GF_EXIT_OK or the exit code of a failed start. */
static int startup_finish(struct daemon *d, struct gf_dm_build *b)
{
	struct gf_errbuf eb = {{0}};
	struct gf_reload_job *j = &b->job;
	if (j->cfg && d->cfg == j->cfg)
		j->cfg = NULL; /* d->cfg owns it (build_progress shared it) */
	else if (j->cfg) {
		d->cfg = j->cfg; /* loaded and done within one loop pass */
		j->cfg = NULL;
		apply_log_level(d->cfg);
	}
	if (j->err) {
		gf_err("%s", gf_reload_reason(&j->r));
		return gf_exit_code(j->err);
	}
	take_plot(d, j);
	d->engine = j->engine; /* the job had no running config: a restart, with its engine */
	d->suppress = j->suppress;
	j->engine = NULL;
	j->suppress = NULL;
	d->started = 1;
	gf_info("filters built in %.2f s", (gf_now_ms() - b->t0_ms) / 1000.0);
	if (d->wd_usec) {
		/* The build was progress up to here: ping, so that the stream's start
		 * (device open, buffer pinning) is not added to the build's last interval. */
		gf_notify_watchdog();
		d->next_wd_ms = gf_now_ms() + (int64_t)(d->wd_usec / 2000u);
	}
	int err = d->rs ? 0 : gf_dm_stream_start(d, &eb);
	if (err) {
		if (!d->stop) /* else stopped meanwhile (SIGTERM), or already said (a call left behind) */
			gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		return gf_exit_code(err);
	}
	if (d->rs)
		gf_dm_outage_resume(d, d->rs);
	if (gf_watch_new(&d->watch, (uint32_t)d->debounce_ms, &eb) != 0)
		gf_warn("config file changes will not reload: %s", eb.msg);
	watch_config_files(d);
	gf_dm_status_open(d);
	double st = d->o->stats_interval_s == 0 ? DEFAULT_STATS_S : d->o->stats_interval_s;
	d->stats_every_ms = st > 0 ? (int64_t)(st * 1000.0) : 0;
	d->next_stats_ms = gf_now_ms() + d->stats_every_ms;
	gf_dm_status_update(d, 1);
	return GF_EXIT_OK;
}

/* The daemon's own waits that a test may shorten (test_hook.h): a test that waits one out many
 * times, or for a stall it made, waits time, not work. And an audio server that answers an open
 * late, on purpose. */
static void read_test_hooks(struct daemon *d)
{
	d->debounce_ms = gf_test_hook_value("GPUFIR_TEST_DEBOUNCE_MS", "daemon");
	if (d->debounce_ms < 0)
		d->debounce_ms = DEBOUNCE_MS;
	d->stall_ms = gf_test_hook_value("GPUFIR_TEST_STALL_MS", "daemon");
	if (d->stall_ms <= 0)
		d->stall_ms = STALL_MS;
	d->late_open_after = gf_test_hook_value("GPUFIR_FAULT_LATE_OPEN_AFTER", "daemon");
	d->late_open_ms = gf_test_hook_value("GPUFIR_FAULT_LATE_OPEN_MS", "daemon");
	if (d->late_open_ms <= 0)
		d->late_open_ms = 1000;
	/* An image started by one of the first K restarts in place leaves all its opens behind: a
	 * server late through several restarts, each image's first attempt included. */
	int64_t restarts = gf_test_hook_value("GPUFIR_FAULT_LATE_OPEN_RESTARTS", "daemon");
	if (d->late_open_after >= 0 && d->rs && d->rs->respawns <= restarts)
		d->late_open_after = 0;
}

/* Start the watchdog and the start-up build; the loop carries on from there
 * (startup_finish). @p rs: state handed over by an in-place restart, or NULL. */
static int daemon_start(struct daemon *d, const struct gf_respawn *rs)
{
	d->rs = rs;
	read_test_hooks(d);
	d->wd_usec = gf_notify_watchdog_usec();
	if (d->wd_usec)
		gf_info("systemd watchdog: %.1f s, pinging every %.1f s while filters build, audio flows or "
			"a lost device is being retried",
			d->wd_usec / 1e6, d->wd_usec / 2e6 - WD_EARLY_MS / 1e3);
	int err = gf_dm_build_start(d, GF_DM_BUILD_STARTUP, "start-up");
	if (err) {
		gf_err("cannot start the filter build: %s", gf_strerror(err));
		return gf_exit_code(err);
	}
	if (d->wd_usec) {
		gf_notify_watchdog(); /* and then on the grid, through the build */
		d->next_wd_ms = gf_now_ms() + (int64_t)(d->wd_usec / 2000u);
	}
	return 0;
}

static int left_stuck_work;

int gf_daemon_left_stuck_work(void)
{
	return left_stuck_work;
}

static void daemon_finish(struct daemon *d)
{
	if (d->build && d->build->kind == GF_DM_BUILD_STARTUP && d->cfg) /* the build's: freed with it */
		d->cfg = NULL;
	d->builds_abandoned += gf_dm_build_abandon(d);
	if (d->engine) {
		if (d->live)
			gf_live_get_stats(d->live, &d->ls);
		gf_dm_stats_log(d);
	}
	gf_dm_stream_stop(d);
	gf_dm_hum_free(d);
	gf_dm_volume_free(d, !d->audio_stuck); /* writes the state file if it is behind */
	gf_status_server_free(d->status);
	gf_dm_api_close(d);
	gf_watch_free(d->watch);
	if (!d->engine_stuck) { /* else a stuck worker still holds them */
		gf_engine_free(d->engine);
		gf_suppress_bank_free(d->suppress);
	}
	/* GPU work that never ended (an instance left alive), a stuck worker's engine, a build, a
	 * PortAudio call that never returned. */
	left_stuck_work = gf_engine_left_work() > 0 || d->engines_abandoned > 0 || d->builds_abandoned > 0 ||
			  d->audio_stuck;
	if (!d->builds_abandoned) /* else the abandoned build may still read it */
		gf_config_free(d->cfg);
	free(d->plot_svg);
}

int gf_daemon_run(const struct gf_daemon_opts *o)
{
	struct daemon d;
	sigset_t old;
	struct gf_respawn rs;
	memset(&d, 0, sizeof(d));
	d.o = o;
	d.t0_ms = gf_now_ms();
	d.ready_pending = 1;
	gf_dm_log_window_reset(&d);
	int respawned = gf_respawn_take(&rs); /* before any thread exists: edits the environment */
	/* A JACK client must never start a server of its own (libjack would, from ~/.jackdrc, and
	 * wait for it): the service's audio server is started by its own unit. */
	setenv("JACK_NO_START_SERVER", "1", 0);
	d.sigfd = signals_open(&old);
	if (d.sigfd < 0) {
		gf_err("signalfd: %s", strerror(errno));
		return GF_EXIT_FAILURE;
	}
	int rc = daemon_start(&d, respawned ? &rs : NULL);
	if (rc == GF_EXIT_OK) {
		loop(&d);
		rc = d.exit_code;
		/* STOPPING=1 once started, or when stopped during the start-up build; not for a failed start.
		 */
		if (!d.respawn && (d.started || rc == GF_EXIT_OK)) {
			gf_notify_stopping();
			if (rc == GF_EXIT_OK)
				gf_notify_status("stopping");
		}
	}
	daemon_finish(&d);
	if (d.respawn) /* signals stay blocked: one arriving now waits for the new image */
		rc = gf_dm_respawn_exec(&d);
	close(d.sigfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
