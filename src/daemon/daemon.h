/**
 * @file daemon.h
 * The live daemon's control loop: config, engine, live stream, signals
 * (SIGINT/SIGTERM stop, SIGHUP reloads), systemd notify and watchdog,
 * file-watch reload, periodic stats and the status socket.
 *
 * Folder src/daemon/ (the loop, its build thread, reload, file watch,
 * systemd notify, the status socket's server and client, restart in place):
 * this header is its entry point. It stands on config and stream. Runs on
 * the process's main thread plus one build thread and, at times, one thread
 * for a PortAudio call (daemon_audio.c); it may block, but the loop never
 * stops answering signals, the watchdog and status queries for long.
 */
#ifndef GPUFIR_DAEMON_H
#define GPUFIR_DAEMON_H

#include "config.h"
#include "live.h"

struct gf_daemon_opts {
	struct gf_config_source src; /**< the config file (NULL: built-in default) and overrides */
	double stats_interval_s;     /**< periodic stats log; 0 = default (60 s), < 0 = off */
	/** main()'s argv, to restart in place after losing the audio server;
	 * NULL: exit for systemd to restart instead. */
	char *const *argv;
};

/**
 * Run until SIGINT/SIGTERM. When the audio server goes away in a way PortAudio
 * cannot recover from inside the process, re-executes the program in place
 * (same PID; @p o->argv, see respawn.h) and carries on retrying there.
 * @return a GF_EXIT_* code.
 */
int gf_daemon_run(const struct gf_daemon_opts *o);

/**
 * The daemon's process-wide signal disposition for files, set before any
 * thread exists (gf_daemon_run does): SIGXFSZ is ignored, so that a
 * recording reaching RLIMIT_FSIZE fails its write with EFBIG and ends with a
 * message while audio goes on, instead of the signal killing the daemon.
 */
void gf_daemon_ignore_sigxfsz(void);

/**
 * 1 after gf_daemon_run() if GPU work was left stuck (a missed deadline, an
 * abandoned worker): the process should then end with _exit(), since the
 * CUDA runtime's teardown at exit() could wait for that work.
 */
int gf_daemon_left_stuck_work(void);

/**
 * The stream settings of @p c (devices, rate, block, slack, recording), as
 * gf_live_new takes them; @p p points into @p c's strings.
 */
void gf_daemon_live_params(const struct gf_config *c, struct gf_live_params *p);

/**
 * Query a running daemon through its status socket and print the answer to
 * stdout. @p socket_path NULL = GF_STATUS_DEFAULT_PATH ("/run/gpufir/status").
 * @return GF_EXIT_OK, or GF_EXIT_IO when no daemon answers
 */
int gf_daemon_print_status(const char *socket_path);

#endif
