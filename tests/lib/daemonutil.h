/**
 * @file daemonutil.h
 * The systemd side of the daemon tests: run the real `gpufir --live` as
 * systemd does (exec'ed from a forked child, so WATCHDOG_PID is its own PID;
 * NOTIFY_SOCKET; WATCHDOG_USEC), listen on the notify socket and count what
 * the daemon says there, query its status socket, and on failure print the
 * tail of its log and take the daemon and the private JACK server down with
 * the test. One daemon per test process: the exit handler needs to find it.
 */
#ifndef GPUFIR_TESTS_DAEMONUTIL_H
#define GPUFIR_TESTS_DAEMONUTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jack/jack.h>

#include "jackplay.h"

/** What came on the notify socket. */
struct gf_notify_log {
	int ready, reloading, watchdog, status, stopping;
	int in_reload;		    /* RELOADING=1 seen, READY=1 not yet */
	double last_wd, max_wd_gap; /* seconds between WATCHDOG=1 pings (when sent) */
	double max_wd_gap_end;	    /* when the longest gap ended (gf_now_s()) */
	double ready_at;	    /* when the last READY=1 was sent */
	char last_status[1024];
	const char *watch; /* if set, count the STATUS= messages that contain it... */
	int watched;	   /* ...here */
};

struct gf_daemon {
	char dir[512]; /* scratch directory, removed by gf_daemon_finish() */
	char conf_path[600], log_path[600], sock_path[600], status_path[600];
	pid_t pid; /* gpufir, or -1 */
	int notify_fd;
	struct gf_jack_server jack; /* the private JACK server, stopped with gpufir */
	struct gf_notify_log nl;
};

/** Seconds on the monotonic clock. */
/**
 * The program under test (GPUFIR_BIN, set by ctest); the test is skipped
 * without it or, with @p need_jackd, without jackd on PATH.
 */
const char *gf_daemon_test_bin(int need_jackd);
/** 1 if GPUFIR_TEST_BACKEND=cuda (the GPU machine's runs), else 0 (the CPU backend). */
int gf_daemon_test_cuda(void);
/**
 * Open the daemon's config for writing, with the head every JACK test shares:
 * rate, block, @p backend, latency_slack (gf_test_latency_slack()), the status
 * socket, JACK input (@p ch channels) and output on @p device, and
 * gf_daemon_conf_gpu_path's line. The caller writes the filters and the rest,
 * and closes it.
 */
/** The config line gpu_path = "$GPUFIR_TEST_GPU_PATH" (the GPU check's persistent-path runs), where
 * that is set; nothing otherwise. */
void gf_daemon_conf_gpu_path(FILE *f);
FILE *gf_daemon_conf_begin(const struct gf_daemon *d, unsigned rate, unsigned block, const char *backend,
			   unsigned ch, const char *device);
/**
 * As gf_daemon_conf_begin, into a file beside the config that gf_daemon_conf_end_new closes and
 * renames into place: a reload (the daemon watches the file) never reads it half-written.
 */
FILE *gf_daemon_conf_begin_new(const struct gf_daemon *d, unsigned rate, unsigned block, const char *backend,
			       unsigned ch, const char *device);
void gf_daemon_conf_end_new(const struct gf_daemon *d, FILE *f);
/** A loopback TCP port free at the time of the call, for the daemon's control_port. */
int gf_daemon_free_tcp_port(void);
/** One HTTP/1.1 @p request over a fresh loopback TCP connection to @p port; the whole response (the
 *  server closes it: "Connection: close") in @p out, or what came within 10 s.
 *  @return 0, or -1 when nothing listens on @p port */
int gf_daemon_http(int port, const char *request, char *out, size_t size);
/** This machine's first non-loopback IPv4 address in @p out. @return 1, or 0: there is none */
int gf_daemon_wide_address(char *out, size_t len);
/** The control key the daemon made at start in its scratch directory (control.key), one line. */
void gf_daemon_read_key(const struct gf_daemon *d, char *key, size_t size);
/** Write @p n taps, one per line ("text" format), to @p name in the scratch directory. */
void gf_daemon_write_taps_text(const struct gf_daemon *d, const char *name, const float *h, size_t n);
/**
 * Make the scratch directory (gf_test_tmpdir(@p tag)) and the paths in it,
 * bind the notify socket, and have gf_daemon_cleanup() run at exit.
 */
void gf_daemon_init(struct gf_daemon *d, const char *tag);
/**
 * Start `BIN --live -c CONF`, stdout and stderr to the log, NOTIFY_SOCKET set;
 * WATCHDOG_USEC and WATCHDOG_PID too if @p watchdog_s > 0. Sets d->pid.
 */
void gf_daemon_spawn(struct gf_daemon *d, const char *bin, double watchdog_s);
/** 1 while gpufir runs; reaps it (d->pid = -1) once it has exited. */
int gf_daemon_alive(struct gf_daemon *d);
/**
 * Stop gpufir as systemd does (SIGTERM), reading the notify socket while it
 * goes; fail unless it exits 0 within @p timeout_s. @p when ends the messages.
 */
void gf_daemon_terminate(struct gf_daemon *d, double timeout_s, const char *when);
/** SIGKILL gpufir and stop the JACK server, if running. Idempotent. */
void gf_daemon_cleanup(struct gf_daemon *d);
/** Clean up and remove the scratch directory (the test passed). */
void gf_daemon_finish(struct gf_daemon *d);
/** Print "FAIL: why" and the tail of gpufir's log, clean up, exit 1. */
void gf_daemon_die(struct gf_daemon *d, const char *why) __attribute__((noreturn));

/** Read notify messages into d->nl for up to @p timeout_ms (0: what is queued). */
void gf_daemon_notify_read(struct gf_daemon *d, int timeout_ms);
/** Sleep @p ms while still reading the notify socket (watchdog gaps are timed on arrival). */
void gf_daemon_idle_ms(struct gf_daemon *d, int ms);
/** Wait until @p n READY=1 messages in all; fail after @p timeout_s or if gpufir exits. */
void gf_daemon_wait_ready(struct gf_daemon *d, int n, double timeout_s, const char *what);

#define GF_DAEMON_TAP_MAX_CH 8

/**
 * The test client's signal path, frame for frame in one JACK cycle: it feeds
 * @p x to gpufir's inputs (silence before feed_start and after the signal)
 * and records what gpufir's outputs play into @p rec, from its first cycle.
 */
struct gf_daemon_tap {
	const float *x; /* frames x ch, interleaved */
	float *rec;	/* frames x rec_ch, interleaved; the caller allocates both */
	size_t frames;
	int ch;				 /* fed channels, <= GF_DAEMON_TAP_MAX_CH */
	int rec_ch;			 /* recorded channels (gpufir's outputs), <= GF_DAEMON_TAP_MAX_CH */
	atomic_size_t feed_pos, rec_pos; /* frames of the cycles so far (rec_pos: release) */
	atomic_size_t feed_start;	 /* feed position of x's first frame (0: at once) */
	jack_port_t *feed[GF_DAEMON_TAP_MAX_CH], *rec_port[GF_DAEMON_TAP_MAX_CH];
};

/** Set @p t up to feed @p x from feed position @p feed_start on and record into @p rec. */
void gf_daemon_tap_init(struct gf_daemon_tap *t, const float *x, float *rec, size_t frames, int ch,
			size_t feed_start);
/** As gf_daemon_tap_init, feeding @p ch channels and recording @p rec_ch (a mixer's outputs). */
void gf_daemon_tap_init_io(struct gf_daemon_tap *t, const float *x, int ch, float *rec, int rec_ch,
			   size_t frames, size_t feed_start);

/**
 * Start the private JACK server (dummy driver, @p rate, @p period, as many
 * dummy capture ports as @p tap feeds and playback ports as it records, at least 2; names
 * PREFIX-N, see jackplay.h) into d->jack and open a test client on it with
 * @p tap's feed (output) and record (input) ports, named feed_N / rec_N,
 * running the tap; activated. Skips the test (77) if the server does not start.
 */
jack_client_t *gf_daemon_jack_client(struct gf_daemon *d, const char *prefix, uint32_t rate, uint32_t period,
				     struct gf_daemon_tap *tap);

/**
 * Connect @p tap's feed ports (client @p c) to gpufir's JACK inputs and
 * gpufir's outputs to its record ports (PortAudio names them "<client>:in_N"
 * / "out_N", client "gpufir"), after removing the dummy capture ports
 * PortAudio auto-connects. Fails the test if they are missing.
 */
void gf_daemon_connect_ports(struct gf_daemon *d, jack_client_t *c, const struct gf_daemon_tap *tap);

/** The status block from gpufir's status socket (as `gpufir --status`), or fail. */
void gf_daemon_query_status(struct gf_daemon *d, char *buf, size_t len);
/** The number after "KEY: " in a status block, or -1. */
long gf_daemon_status_num(const char *block, const char *key);
/** 1 if the status block holds @p what; else 0, and the block printed with what it lacks. */
int gf_daemon_status_has(const char *block, const char *what);
/** gpufir's own xruns in status block @p st, as test_daemon_jack counts them: its rings over- and
 *  underflowing (the dummy driver's own, device_xruns, come with the machine's load, not the stream). */
long gf_daemon_status_xruns(const char *st);
/** The status now, into @p st: the stream has run on since *@p blocks (its block count grew: no
 *  restart) with no xrun beyond @p xruns, else the test dies; *@p blocks updated. @p what: for the log. */
void gf_daemon_ran_on(struct gf_daemon *d, long *blocks, long xruns, const char *what, char *st, size_t len);
/** Status block @p st has the line "KEY: VALUE", else the test dies saying which. */
void gf_daemon_expect_line(struct gf_daemon *d, const char *st, const char *key, const char *value);
/** The config file was rewritten: the reload's READY (number ++*@p ready) comes and the status says
 *  it was applied live ("last_reload: reloaded"), else the test dies saying @p why. */
void gf_daemon_reload_live(struct gf_daemon *d, int *ready, const char *what, const char *why);

/** Skip the test (77) where scripts/install-deepfilter.sh has not installed DeepFilterNet's runtime
 *  and model (gf_neural_default_dir()): the neural stage cannot run. */
void gf_daemon_need_deepfilter(void);

/* The neural stage's runtime for the live tests' configs: under the sanitizers the engine's own
 * inference runs instrumented and unoptimised, too slow for a live stream's hops (late hops, a
 * stuck worker); the reference runtime (libdeepfilter) is not instrumented. The Release suite
 * runs the engine's. */
#if defined(__SANITIZE_ADDRESS__)
#define GF_TEST_NEURAL_RUNTIME "runtime = \"reference\"; "
#else
#define GF_TEST_NEURAL_RUNTIME ""
#endif

#endif
