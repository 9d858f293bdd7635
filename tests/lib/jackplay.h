/**
 * @file jackplay.h
 * JACK helpers for the live tests: a private JACK server (dummy driver, sync
 * mode), and a test rig of two JACK clients, a player that feeds a signal into
 * the client under test and a recorder that records what it sends back. Two
 * clients, not one, so the graph has no feedback loop: player -> gpufir ->
 * recorder all run in the same cycle, and JACK frame times relate the three
 * sample-exactly.
 */
#ifndef GPUFIR_TESTS_JACKPLAY_H
#define GPUFIR_TESTS_JACKPLAY_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define GF_JACK_MAX_CH 8

struct gf_jack_server {
	pid_t pid;
	char name[64];
	uint32_t ports;		/* the dummy driver's playback ports (system:playback_N) */
	uint32_t capture_ports; /* and its capture ports (system:capture_N) */
	int lock_fd;		/* its name's claim: held from start until the process exits */
};

/**
 * Start `jackd -n NAME -S -R -d dummy -r RATE -p PERIOD -C 2 -P 2` as NAME = PREFIX-0..3 (the
 * first that no other process has claimed and no running server has), wait until it accepts
 * clients, and set JACK_DEFAULT_SERVER=NAME (and JACK_NO_START_SERVER). The server dies with the
 * test process (parent-death signal); the name stays this process's until it exits.
 * @return 0, or -1 (message printed) if jackd is missing or did not start.
 */
int gf_jack_server_start(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period);
/** gf_jack_server_start with @p ports capture and playback ports (-C and -P) instead of 2: what
 * PortAudio's JACK device "system" then offers a stream of more channels. */
int gf_jack_server_start_ports(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period,
			       uint32_t ports);
/** gf_jack_server_start with @p capture capture ports (-C) and @p playback playback ports (-P):
 * the device "system" then offers a stream of more outputs than inputs (a crossover), or fewer. */
int gf_jack_server_start_io(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period,
			    uint32_t capture, uint32_t playback);
/**
 * Start the server again under the same name after gf_jack_server_stop(), as
 * a supervisor restarts a crashed server (its clients look for that name).
 * @return 0 or -1.
 */
int gf_jack_server_restart(struct gf_jack_server *s, uint32_t rate, uint32_t period);
/** Send @p sig (SIGKILL after 5 s), reap it, remove its /dev/shm files. Idempotent. */
void gf_jack_server_stop(struct gf_jack_server *s, int sig);

struct gf_jack_rig;

/**
 * Open the player and recorder clients with @p channels ports each.
 * The recorder can hold @p rec_frames frames. @return NULL on failure.
 */
struct gf_jack_rig *gf_jack_rig_open(uint32_t channels, uint32_t rec_frames);
void gf_jack_rig_close(struct gf_jack_rig *r);

/**
 * Disconnect @p client's ports from everything else, then connect player
 * out_k -> client in_k and, if @p to_recorder, client out_k -> recorder in_k.
 * @p client is a JACK client-name prefix; ports are found by regex. @return 0 or -1.
 */
int gf_jack_rig_connect(struct gf_jack_rig *r, const char *client, int to_recorder);

/** Begin recording at the next cycle. */
void gf_jack_rig_record(struct gf_jack_rig *r);
/**
 * Begin playing @p frames interleaved frames at the next cycle; in that
 * cycle, from the player's process callback, call @p hook (may be NULL).
 */
void gf_jack_rig_play(struct gf_jack_rig *r, const float *signal, uint32_t frames, void (*hook)(void *),
		      void *arg);
/** 1 once the whole signal has been played. */
int gf_jack_rig_played(const struct gf_jack_rig *r);
/** Stop recording; @return frames recorded (interleaved in *out, owned by the rig). */
uint32_t gf_jack_rig_stop_recording(struct gf_jack_rig *r, const float **out);

/** JACK frame time of the first played / recorded frame. */
uint32_t gf_jack_rig_play_time(const struct gf_jack_rig *r);
uint32_t gf_jack_rig_record_time(const struct gf_jack_rig *r);
/** JACK's xrun count seen by the rig's clients. */
uint32_t gf_jack_rig_xruns(const struct gf_jack_rig *r);
/** Server period in frames. */
uint32_t gf_jack_rig_period(const struct gf_jack_rig *r);

/** One client's cycles since play (recorder: record) began: the JACK frame
 * time each started at and its frames. Filled by the process callback. */
struct gf_jack_cycles {
	uint32_t *time, *frames;
	uint32_t cap;
	_Atomic uint32_t count;
};
const struct gf_jack_cycles *gf_jack_rig_cycles(const struct gf_jack_rig *r, int recorder);
/**
 * Cycles of the player (@p recorder 0) or the recorder (1) that did not start
 * where the previous one ended in frame time (a cycle the client missed, or
 * the graph's clock jumping); the first 10 are described on @p log (may be
 * NULL). Call after the recording stopped. @return how many.
 */
uint32_t gf_jack_rig_cycle_gaps(const struct gf_jack_rig *r, int recorder, FILE *log);

#endif
