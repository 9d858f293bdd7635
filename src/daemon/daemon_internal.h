/*
 * Internal to the daemon: its state, shared by daemon.c (signals, reload, the
 * loop, start and stop), daemon_stream.c (engine and stream, device loss and
 * health) and daemon_report.c (STATUS=, the status socket, the stats log).
 * Everything here runs on the daemon's control thread, except a build
 * (daemon_build.c), which runs on a build thread of its own and touches only
 * its struct gf_dm_build.
 */
#ifndef GPUFIR_DAEMON_INTERNAL_H
#define GPUFIR_DAEMON_INTERNAL_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "live.h"
#include "notify.h"
#include "reload.h"
#include "respawn.h"
#include "status.h"
#include "watch.h"

#define LOOP_MS 200		       /* longest poll sleep: health/watchdog/stats granularity */
#define DEBOUNCE_MS 150		       /* one editor save = one reload */
#define STALL_MS 3000		       /* no block for this long while "running" = device lost */
#define START_TIMEOUT_MS 10000	       /* a started stream must deliver its first block by then */
#define RETRY_MIN_MS GF_RESPAWN_MIN_MS /* device-loss retry backoff: 0.5 s doubling to 10 s */
#define STATUS_EVERY_MS 2000	       /* STATUS= refresh (xruns, p99 change continuously) */
#define STATUS_RECHECK_MS 1000	       /* is the status socket's file still there? */
#define NOTIFY_RETRY_MS 10	       /* systemd's queue was full: send what it kept back this soon */
#define DEFAULT_STATS_S 60.0
/* Ping through one build for at most this long: a build that never ends stops the pings. */
#define BUILD_PING_MAX_MS 600000
/* Ping this much before WATCHDOG_USEC/2: the loop's own wake-up latency (under ASan, with a
 * build running on the other core, wake-ups 50 ms and, during a SIGHUP storm, 118 ms late
 * were seen). Early pings cost nothing; one later than WATCHDOG_USEC/2 breaks the promise. */
#define WD_EARLY_MS 250
/* PortAudio calls (daemon_audio.c): how long one may take before it is left behind. Opening
 * includes the engine's warm-up (up to 5 s) and the first callback (up to 2 s); closing the
 * worker's join (1 s). Once the daemon stops, an open is given 200 ms more, a close 1.2 s
 * (the stream drains and the recording is finished), so that SIGTERM ends it within 2 s. */
#define GF_DM_AUDIO_OPEN_MS 12000
#define GF_DM_AUDIO_CLOSE_MS 3000
#define GF_DM_AUDIO_GRACE_OPEN_MS 200
#define GF_DM_AUDIO_GRACE_CLOSE_MS 1200

enum dstate {
	D_STARTING, /* stream started, waiting for its first block */
	D_RUNNING,  /* audio flows */
	D_LOST,	    /* no stream: device lost, retrying with backoff */
};

/* Watchdog policy (docs/daemon.md): ping while audio flows, and while the
 * loop deliberately retries an outage of known cause; not while a running
 * stream makes no progress, nor after the engine stalled (cause unknown: a
 * fresh process is the remedy, which systemd's watchdog provides). */

/* What a build is for: its status (`build:`) and what the loop does with it. */
enum gf_dm_build_kind {
	GF_DM_BUILD_STARTUP, /* the first config and engine */
	GF_DM_BUILD_RELOAD,  /* a reload: a filter to swap in, or a restart's engine */
	GF_DM_BUILD_ENGINE,  /* a CPU engine for the running config, replacing a stuck worker's */
};

/* One build on the build thread (daemon_build.c): its job's inputs are fixed
 * before the thread starts, its outputs read by the control thread once done
 * is set. */
struct gf_dm_build {
	pthread_t thread;
	int thread_live; /* started and not joined yet */
	int efd;	 /* eventfd written when done: in the loop's poll set */
	atomic_int done; /* release: the job's outputs are complete */
	enum gf_dm_build_kind kind;
	int64_t t0_ms;
	char trigger[600];
	struct gf_reload_job job; /* what the thread runs (reload.c) */
	/* The job's source: the daemon's, with the text below and the hum found so far. */
	struct gf_config_source src;
	char *text; /* a config text to load (the control API's SetConfig), or NULL */
	struct gf_hum hum;
};

struct gf_dm_hum; /* daemon_hum.c */

struct daemon {
	const struct gf_daemon_opts *o;
	struct gf_config *cfg;
	struct gf_engine *engine;
	/* the noise suppressor the stream runs after d->engine (NULL: none): made
	 * and replaced with the engine, held with it by a stuck worker */
	struct gf_suppress_bank *suppress;
	const struct gf_suppress_bank *suppress_seen; /* the bank whose GPU failures were logged */
	uint64_t suppress_failures_seen, suppress_returns_seen;
	/* the control API's bypass and dB per stage (gf_api_stage_id; daemon_suppress.c) */
	struct gf_suppress_live stage_live[GF_API_STAGES];
	struct gf_live *live;
	struct gf_dm_volume *vol; /* volume, mute, the gain stage (daemon_control.c); NULL until set up */
	struct gf_watch *watch;
	struct gf_status_server *status;
	struct gf_dm_api *api; /* the control API (daemon_api.c), or NULL */
	int sigfd;
	int stop;	     /* leave the loop */
	int hup_pending;     /* a SIGHUP asks for a reload */
	uint64_t hups;	     /* SIGHUPs since the last SIGHUP reload */
	int64_t next_hup_ms; /* earliest time for the next SIGHUP reload */
	int64_t debounce_ms; /* DEBOUNCE_MS, or GPUFIR_TEST_DEBOUNCE_MS's */
	int64_t stall_ms;    /* STALL_MS, or GPUFIR_TEST_STALL_MS's */
	/* GPUFIR_FAULT_LATE_OPEN_AFTER (-1: unset): the opens after that many in this image are
	 * left behind after GPUFIR_FAULT_LATE_OPEN_MS, their thread still waiting twice that long
	 * before it starts the stream it opened (daemon_audio.c); 0 in an image started by one of
	 * the first GPUFIR_FAULT_LATE_OPEN_RESTARTS restarts in place */
	int64_t late_open_after, late_open_ms;
	int64_t opens; /* gf_dm_audio_open calls in this image */
	int healthy;   /* the last health check found audio flowing */
	int exit_code; /* GF_EXIT_* to return once stopped */
	enum dstate state;
	int ready_sent;	   /* READY=1 sent (by this image or the one before an in-place restart) */
	int ready_pending; /* send READY=1 when audio flows: at start and after each outage */
	int64_t t0_ms;
	int64_t state_since_ms;
	/* health */
	struct gf_live_stats ls;
	uint64_t last_blocks;
	int64_t last_advance_ms;
	int64_t idle_since_ms; /* when the capture went idle (gf_live_idle), 0: not idle */
	int idle_said;	       /* and that was logged */
	/* extremes since the last stats log line: its window, not the last poll's */
	struct {
		float peak;
		double callback_gap_us, wake_us;
		int32_t margin_frames;
	} logw;
	uint64_t cap_at_advance; /* capture position when blocks last advanced */
	uint32_t latency_seen;	 /* the stream's latency last published (0: none yet) */
	uint32_t slack_seen;	 /* the slack it was published with (auto: a change is a step) */
	/* device-loss retry */
	uint32_t retry_ms; /* last wait between attempts */
	uint32_t retries;  /* attempts made in this outage (across in-place restarts) */
	int64_t next_retry_ms;
	int64_t lost_at_ms; /* when the current outage began; 0: none */
	int lost_known;	    /* the outage has a known cause (device or server gone): keep pinging */
	int server_lost;    /* the audio server went away: reconnecting needs an in-place restart */
	int respawn;	    /* leave the loop to restart in place */
	uint32_t respawns;  /* in-place restarts since the service started */
	uint32_t outages;   /* audio losses since the service started */
	char lost_reason[600];
	/* watchdog, stats, STATUS= */
	uint64_t wd_usec;
	int64_t next_wd_ms;
	int64_t stats_every_ms;
	int64_t next_stats_ms;
	int64_t next_status_ms;
	char status_sent[512];
	int64_t next_sock_check_ms; /* is the status socket's file still ours? (gf_dm_status_recheck) */
	int sock_renew_failed;	    /* said once; said again after a success */
	/* a stuck audio worker (gf_live_worker_abandoned) */
	unsigned engines_abandoned; /* engines left to stuck workers, never freed */
	int engine_stuck;	    /* d->engine is one of them: query it only, never free or run it */
	int force_cpu;		    /* build later engines on the CPU backend */
	int audio_stuck;	    /* a PortAudio call was left behind: no more PortAudio in this image */
	/* builds and reloads */
	struct gf_dm_build *build;   /* the build running (or its swap waiting), or NULL */
	int started;		     /* the start-up build is done and applied */
	int builds_abandoned;	     /* left running at exit: end with _exit */
	const struct gf_respawn *rs; /* state an in-place restart handed over, or NULL */
	uint64_t reloads;
	uint64_t reload_failures;
	int64_t last_reload_ms;
	char last_reload[700];
	/* the running filters' response as SVG (reload.h's plot_svg), served by the WebSocket; NULL:
	 * none drawn */
	char *plot_svg;
	size_t plot_len;
	struct gf_dm_hum *hum; /* live hum detection (daemon_hum.c); NULL until a config asks for it */
};

/* daemon_stream.c */
/** Open and start the stream on d->cfg/d->engine. On failure d->live stays NULL. */
int gf_dm_stream_start(struct daemon *d, struct gf_errbuf *eb);
/** Bounded (gf_live_stop); a stuck worker's engine is abandoned (d->engine_stuck). */
void gf_dm_stream_stop(struct daemon *d);
/** A stuck worker's engine waits for a replacement: start its build if none runs. */
void gf_dm_engine_replace_due(struct daemon *d);
/** The replacement's build is done: run on its engine, or exit if there is none. */
void gf_dm_engine_replaced(struct daemon *d, struct gf_dm_build *b);
/** The stream is gone (@p known: device or server loss, as opposed to a stall): retry with backoff. */
void gf_dm_device_lost(struct daemon *d, const char *why, int known);
/** Poll the stream, move between states. @return 1 if audio flows. */
int gf_dm_health_check(struct daemon *d);
/** Carry on with the outage an in-place restart handed over. */
void gf_dm_outage_resume(struct daemon *d, const struct gf_respawn *r);

/** A PortAudio call was left behind (daemon_audio.c): keep its engine, restart in place (or exit).
 *  @p opening: it opened a stream (an attempt that failed: the outage's backoff grows). */
void gf_dm_audio_abandoned(struct daemon *d, int opening, int64_t waited_ms);

/* daemon_audio.c */
/** gf_live_new + gf_live_start of @p lp on d->engine, off the control thread, bounded (the loop
 *  answers signals, status and the watchdog meanwhile). On failure *out is NULL, why in @p eb. */
int gf_dm_audio_open(struct daemon *d, const struct gf_live_params *lp, struct gf_live **out,
		     struct gf_errbuf *eb);
/** gf_live_stop + gf_live_free of @p l the same way. @return 1 done (*worker_abandoned: its
 *  worker was stuck), 0 left behind (gf_dm_audio_abandoned was called). */
int gf_dm_audio_close(struct daemon *d, struct gf_live *l, int *worker_abandoned);

/* daemon.c, for the waits above */
/** Drain the signalfd into flags (stop, reload wanted). */
void gf_dm_signals_read(struct daemon *d);
/** Ping the watchdog if one falls due (within WD_EARLY_MS) and the policy allows. */
void gf_dm_watchdog_ping(struct daemon *d, int64_t now);

/* daemon_build.c */
/** Start a build on the build thread: of d->o->src against d->cfg (NULL at start-up), or for
 * GF_DM_BUILD_ENGINE a CPU engine of d->cfg. On success it is d->build. */
int gf_dm_build_start(struct daemon *d, enum gf_dm_build_kind kind, const char *trigger);
/** A reload build of the config @p text (copied), loaded as if read from the config file; NULL: the file. */
int gf_dm_build_start_text(struct daemon *d, const char *trigger, const char *text);
/** Run a taken build's job again (gf_reload_job_next said ENGINE). On success it is d->build. */
int gf_dm_build_again(struct daemon *d, struct gf_dm_build *b);
/** "start-up", "reload" or "engine": what @p b builds, for the status. */
const char *gf_dm_build_name(const struct gf_dm_build *b);
/** The running build's eventfd (readable when done), or -1. */
int gf_dm_build_fd(const struct daemon *d);
/** The finished build (joined; d->build NULL again), or NULL while it runs or if none. */
struct gf_dm_build *gf_dm_build_take(struct daemon *d);
/** Free a taken build and what it still owns. Accepts NULL. */
void gf_dm_build_free(struct gf_dm_build *b);
/** At exit: wait briefly for a running build, then abandon it. @return 1 if abandoned. */
int gf_dm_build_abandon(struct daemon *d);

/** The loop has wound down after the audio server was lost: become a fresh image of this
 * program, same PID (daemon_stream.c). Returns only if that failed (GF_EXIT_PROCESS). */
int gf_dm_respawn_exec(struct daemon *d);

/* daemon_hum.c: notches with freq_hz = "auto" follow the hum found in the running input */
/** The tap a new stream's worker copies its input into, or NULL (no such notch). Before it starts. */
struct gf_input_tap *gf_dm_hum_tap(struct daemon *d);
/** Every loop pass: drain the tap, analyse once a second, follow the set found (hysteresis). */
void gf_dm_hum_poll(struct daemon *d);
/** 1 and the reload's trigger in @p trigger when the set found differs from the one notched. */
int gf_dm_hum_due(struct daemon *d, char *trigger, size_t len);
/** The set a build carries (gf_config_source.hum): the one found, else the one notched. */
void gf_dm_hum_for_build(const struct daemon *d, struct gf_hum *out);
/** A reload that carried @p carried is done: if its set is not the one notched now, it failed
 *  and is not tried again until the set found changes. */
void gf_dm_hum_built(struct daemon *d, const struct gf_hum *carried);
/** The status socket's hum lines. */
void gf_dm_hum_status(const struct daemon *d, char *buf, size_t len);
void gf_dm_hum_free(struct daemon *d);
/* daemon_control.c (the control API's functions are in daemon_control.h) */
struct gf_gain_stage;
/** A gain stage at the volume in force, for a stream about to start; it is the daemon's until released. */
int gf_dm_gain_new(struct daemon *d, struct gf_gain_stage **out, struct gf_errbuf *eb);
/** The stream is gone: free its gain stage (@p free_it 0: a stuck thread may still run it; kept). */
void gf_dm_gain_release(struct daemon *d, int free_it);
/** Each loop pass: a reload's volume settings, the state file when due. */
void gf_dm_volume_tick(struct daemon *d);
/** At exit: the state file written if behind; everything freed (the gain stage if @p free_gain). */
void gf_dm_volume_free(struct daemon *d, int free_gain);
/** The status socket's volume, mute, clipped and per-channel level lines. */
void gf_dm_volume_status(struct daemon *d, char *buf, size_t len);

/* daemon_suppress.c (the control API's functions are in daemon_control.h) */
/** d->cfg or d->suppress was replaced (@p old: the config before, NULL: none or the same): drop the
 *  API's settings that the new config changes, and publish the floors to d->suppress and the bypass and
 *  attenuation limit to its neural stage. */
void gf_dm_suppress_reload(struct daemon *d, const struct gf_config *old);

/* daemon_report.c */
const char *gf_dm_state_name(const struct daemon *d);
/** Send STATUS= if it changed (at most every STATUS_EVERY_MS unless @p force). */
void gf_dm_status_update(struct daemon *d, int force);
/** Open the configured status socket (or the service's runtime directory's); a new path that
 *  cannot be bound keeps the old socket. Moves the control API's sockets too. */
void gf_dm_status_open(struct daemon *d);
/** Bind the status socket @p c asks for, if it is not the running one, and let it go: SetConfig's
 *  check that a move will work. @return 0, or an error naming status_socket in @p eb */
int gf_dm_status_probe(const struct daemon *d, const struct gf_config *c, struct gf_errbuf *eb);
/** Answer one status query. */
void gf_dm_status_serve(struct daemon *d);
/** Every STATUS_RECHECK_MS: make the status socket again if its file was removed or replaced. */
void gf_dm_status_recheck(struct daemon *d);
void gf_dm_log_window_reset(struct daemon *d);
/** Fold the latest stats into the stats log line's window. */
void gf_dm_log_window_fold(struct daemon *d);
void gf_dm_stats_log(struct daemon *d);
/** Log and publish a latency the stream re-derived (period change, auto slack step). */
void gf_dm_latency_check(struct daemon *d);

/* daemon.c */
/** Start a reload (@p text: of that config text, else of the file); reload_done reports it. */
void gf_dm_reload_begin(struct daemon *d, const char *trigger, const char *text);

/* daemon_key.c */
/** The control key into @p key: read from control_key_file (else $STATE_DIRECTORY/control.key), or
 *  made there at first start; "" when there is no such place. @return 0 or an error naming the file */
int gf_dm_key_load(const struct gf_config *c, char *key, size_t len, struct gf_errbuf *eb);

/* daemon_api.c: the control API (docs/api.md) on the control thread */
/** Open, reopen or close the control API's sockets as d->cfg says. A move waits (up to
 *  API_MOVE_WAIT_MS) until the requester's reply is written; a new address that cannot be bound
 *  keeps the old sockets. */
void gf_dm_api_open(struct daemon *d);
void gf_dm_api_close(struct daemon *d);
/** Its descriptors to poll. @return how many of @p max were filled */
int gf_dm_api_pollfds(struct daemon *d, struct pollfd *p, int max);
/** Serve what @p p (as polled) says is ready; start a waiting SetConfig/Reload when no build runs. */
void gf_dm_api_serve(struct daemon *d, const struct pollfd *p, int n);
/** The loop's sockets: the status socket (@p p[2]) and the control API's (from @p p[4] on, @p n in all). */
void gf_dm_sockets_serve(struct daemon *d, const struct pollfd *p, int n);
/** The poll timeout, shortened to what the control API needs. */
int gf_dm_api_timeout(const struct daemon *d, int t);
/** A reload finished (reload_done): answer the control API's request, if it was one. */
void gf_dm_api_reload_done(struct daemon *d, const struct gf_reload_result *r);

#endif
