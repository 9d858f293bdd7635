/*
 * Internal to the daemon: its state, shared by daemon.c (signals, reload, the
 * loop, start and stop), daemon_stream.c (engine and stream, device loss and
 * health) and daemon_status.c (STATUS=, the status socket, the stats log).
 * Everything here runs on the daemon's control thread, except a filter build
 * (daemon_build.c), which runs on a build thread of its own and touches only
 * its struct gf_dm_build.
 */
#ifndef GPUFIR_DAEMON_INTERNAL_H
#define GPUFIR_DAEMON_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "live.h"
#include "notify.h"
#include "reload.h"
#include "respawn.h"
#include "status.h"
#include "watch.h"

#define LOOP_MS 200	       /* longest poll sleep: health/watchdog/stats granularity */
#define DEBOUNCE_MS 150	       /* one editor save = one reload */
#define SWAP_RETRY_MS 5	       /* a built filter waiting for the running crossfade: retry this often */
#define STALL_MS 3000	       /* no block for this long while "running" = device lost */
#define START_TIMEOUT_MS 10000 /* a started stream must deliver its first block by then */
#define RETRY_MIN_MS GF_RESPAWN_MIN_MS /* device-loss retry backoff: 0.5 s doubling to 10 s */
#define STATUS_EVERY_MS 2000	       /* STATUS= refresh (xruns, p99 change continuously) */
#define DEFAULT_STATS_S 60.0
/* Ping through one build for at most this long: a build that never ends stops the pings. */
#define BUILD_PING_MAX_MS 600000
/* Ping this much before WATCHDOG_USEC/2: the loop's own wake-up latency (under ASan, with a
 * build running on the other core, wake-ups 50 ms and, during a SIGHUP storm, 118 ms late
 * were seen). Early pings cost nothing; one later than WATCHDOG_USEC/2 breaks the promise. */
#define WD_EARLY_MS 250

enum dstate {
	D_STARTING, /* stream started, waiting for its first block */
	D_RUNNING,  /* audio flows */
	D_LOST,	    /* no stream: device lost, retrying with backoff */
};

/* Watchdog policy (docs/daemon.md): ping while audio flows, and while the
 * loop deliberately retries an outage of known cause; not while a running
 * stream makes no progress, nor after the engine stalled (cause unknown: a
 * fresh process is the remedy, which systemd's watchdog provides). */

/* One filter build on the build thread (daemon_build.c): inputs fixed before
 * it starts, outputs read by the control thread once done is set. */
struct gf_dm_build {
	pthread_t thread;
	int efd;			    /* eventfd written when done: in the loop's poll set */
	atomic_int done;		    /* release: the outputs are complete */
	_Atomic(struct gf_config *) loaded; /* the config, once loaded: read-only from then on */
	/* inputs */
	const struct gf_config_source *src;
	const struct gf_config *running; /* read only; the control thread keeps it until done */
	int engine_running;		 /* a stream runs: a compatible config is swapped in */
	int force_cpu;
	int64_t t0_ms;
	char trigger[600];
	/* outputs */
	int err;
	struct gf_config *cfg;	   /* the new config (also on failure, if it loaded) */
	struct gf_filter_set *fs;  /* APPLIED: to swap into the running engine */
	struct gf_engine *engine;  /* RESTART: the new engine */
	struct gf_reload_result r; /* outcome and text */
	struct gf_errbuf eb;
	/* Done and joined, its filter waiting for the previous swap's crossfade to
	 * end: the loop retries the swap each pass until then (0: not waiting). */
	int64_t swap_until_ms;
};

struct daemon {
	const struct gf_daemon_opts *o;
	struct gf_config *cfg;
	struct gf_engine *engine;
	struct gf_live *live;
	struct gf_watch *watch;
	struct gf_status_server *status;
	int sigfd;
	int stop;	     /* leave the loop */
	int hup_pending;     /* a SIGHUP asks for a reload */
	uint64_t hups;	     /* SIGHUPs since the last SIGHUP reload */
	int64_t next_hup_ms; /* earliest time for the next SIGHUP reload */
	int healthy;	     /* the last health check found audio flowing */
	int exit_code;	     /* GF_EXIT_* to return once stopped */
	enum dstate state;
	int ready_sent;	   /* READY=1 sent (by this image or the one before an in-place restart) */
	int ready_pending; /* send READY=1 when audio flows: at start and after each outage */
	int64_t t0_ms;
	int64_t state_since_ms;
	/* health */
	struct gf_live_stats ls;
	uint64_t last_blocks;
	int64_t last_advance_ms;
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
	/* a stuck audio worker (gf_live_worker_abandoned) */
	unsigned engines_abandoned; /* engines left to stuck workers, never freed */
	int engine_stuck;	    /* d->engine is one of them: query it only, never free or run it */
	int force_cpu;		    /* build later engines on the CPU backend */
	/* builds and reloads */
	struct gf_dm_build *build;   /* the build running, or NULL */
	int build_startup;	     /* it is the start-up build (no engine yet) */
	int started;		     /* the start-up build is done and applied */
	int builds_abandoned;	     /* left running at exit: end with _exit */
	const struct gf_respawn *rs; /* state an in-place restart handed over, or NULL */
	uint64_t reloads;
	uint64_t reload_failures;
	int64_t last_reload_ms;
	char last_reload[700];
};

/* daemon_stream.c */
/** Build an engine for @p c with its filter set; on the CPU backend if @p force_cpu. */
int gf_dm_engine_for(const struct gf_config *c, int force_cpu, struct gf_engine **out, struct gf_errbuf *eb);
/** Open and start the stream on d->cfg/d->engine. On failure d->live stays NULL. */
int gf_dm_stream_start(struct daemon *d, struct gf_errbuf *eb);
/** Bounded (gf_live_stop); a stuck worker's engine is abandoned and replaced by a CPU engine. */
void gf_dm_stream_stop(struct daemon *d);
/** The stream is gone (@p known: device or server loss, as opposed to a stall): retry with backoff. */
void gf_dm_device_lost(struct daemon *d, const char *why, int known);
/** Poll the stream, move between states. @return 1 if audio flows. */
int gf_dm_health_check(struct daemon *d);
/** Carry on with the outage an in-place restart handed over. */
void gf_dm_outage_resume(struct daemon *d, const struct gf_respawn *r);

/* daemon_build.c */
/** Start a build of d->o->src against d->cfg (NULL at start-up) on the build thread. */
int gf_dm_build_start(struct daemon *d, const char *trigger);
/** The running build's eventfd (readable when done), or -1. */
int gf_dm_build_fd(const struct daemon *d);
/** The finished build (joined; d->build NULL again), or NULL while it runs or if none. */
struct gf_dm_build *gf_dm_build_take(struct daemon *d);
/** Free a taken build and what it still owns. Accepts NULL. */
void gf_dm_build_free(struct gf_dm_build *b);
/** At exit: wait briefly for a running build, then abandon it. @return 1 if abandoned. */
int gf_dm_build_abandon(struct daemon *d);

/* daemon_status.c */
const char *gf_dm_state_name(const struct daemon *d);
/** Send STATUS= if it changed (at most every STATUS_EVERY_MS unless @p force). */
void gf_dm_status_update(struct daemon *d, int force);
/** Open the configured status socket (or the service's runtime directory's). */
void gf_dm_status_open(struct daemon *d);
/** Answer one status query. */
void gf_dm_status_serve(struct daemon *d);
void gf_dm_log_window_reset(struct daemon *d);
/** Fold the latest stats into the stats log line's window. */
void gf_dm_log_window_fold(struct daemon *d);
void gf_dm_stats_log(struct daemon *d);
/** Log and publish a latency the stream re-derived (period change, auto slack step). */
void gf_dm_latency_check(struct daemon *d);

#endif
