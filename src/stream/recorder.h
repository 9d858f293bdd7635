/**
 * @file recorder.h
 * WAV recording thread: drains a ring of interleaved float frames into a
 * file through libsndfile (32-bit float RF64 that downgrades itself to a
 * plain WAV under 4 GiB; the header is kept current, so even a killed
 * process leaves a readable file).
 *
 * A write error (disk full, I/O error, file size limit) stops the recording:
 * the error is counted and logged, the file is closed (so what was written is
 * a valid WAV), and the thread keeps draining the ring so the producer never
 * blocks. The producer checks gf_recorder_active() and stops queueing frames.
 *
 * Threads: new/start/stop/free on the control thread; the file is written on
 * the recorder's own thread; gf_recorder_active(), gf_recorder_kick() and the
 * counters are RT-safe for the producer (the audio worker).
 */
#ifndef GPUFIR_RECORDER_H
#define GPUFIR_RECORDER_H

#include <stdint.h>

#include "error.h"
#include "ring.h"

struct gf_recorder;

/**
 * Create a new recording at @p path for @p ring's channel count at @p rate Hz.
 * An existing file is never truncated nor a symlink followed: when @p path
 * exists the recording rolls to PATH-STEM.1.EXT, .2, ... (gf_recorder_path).
 * The file is created owner-only (0600 before the umask).
 * The ring is the caller's; it must outlive the recorder.
 * @return 0, GF_E_IO (names the file and the reason in @p eb) or GF_E_NOMEM
 */
int gf_recorder_new(struct gf_recorder **out, const char *path, uint32_t rate, struct gf_ring *ring,
		    struct gf_errbuf *eb);

/** The file actually written (@p path or a numbered one). Control thread. */
const char *gf_recorder_path(const struct gf_recorder *r);

/** Start the writer thread. @return 0 or GF_E_SYSTEM */
int gf_recorder_start(struct gf_recorder *r, struct gf_errbuf *eb);

/** 1 while frames should be queued (no write error so far). RT-safe. */
int gf_recorder_active(const struct gf_recorder *r);

/** Wake the writer early (e.g. the ring is filling up). RT-safe, never blocks. */
void gf_recorder_kick(struct gf_recorder *r);

/**
 * The producer has finished: write what is queued, close the file, join the
 * thread. Idempotent. Control thread.
 */
void gf_recorder_stop(struct gf_recorder *r);

/** Stops if needed. Accepts NULL. */
void gf_recorder_free(struct gf_recorder *r);

/** Write errors (0 or 1: the first one ends the recording). Any thread. */
uint64_t gf_recorder_errors(const struct gf_recorder *r);
/** Frames written to the file so far. Any thread. */
uint64_t gf_recorder_frames(const struct gf_recorder *r);

#endif
