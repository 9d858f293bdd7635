/**
 * @file progress.h
 * A one-line progress bar for long offline runs: percent, speed (x realtime)
 * and ETA, redrawn in place at most ten times a second.
 *
 * Control thread only (the thread that calls update). Draws nothing when
 * created without an output stream; the timer still runs, so callers can
 * use gf_progress_elapsed() for their summary either way.
 */
#ifndef GPUFIR_PROGRESS_H
#define GPUFIR_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gf_progress;

/**
 * Start the clock. @p out: a terminal stream to draw on, or NULL for none.
 * @p total_frames: 0 when unknown (no percent or ETA then).
 * @return 0 or GF_E_NOMEM
 */
int gf_progress_new(struct gf_progress **out, FILE *tty, uint64_t total_frames, uint32_t sample_rate);

/** Report @p frames_done; redraws if ~100 ms have passed since the last drawing. */
void gf_progress_update(struct gf_progress *p, uint64_t frames_done);

/** Erase the bar (so the summary line starts clean). Safe to call more than once. */
void gf_progress_finish(struct gf_progress *p);

/** Seconds since gf_progress_new. */
double gf_progress_elapsed(const struct gf_progress *p);

/** Accepts NULL. Erases the bar if still drawn. */
void gf_progress_free(struct gf_progress *p);

/**
 * Format one bar line (no '\r', no newline) into @p buf: exposed for tests.
 * @p fraction in [0, 1] or negative when unknown; @p speed in x realtime;
 * @p eta_s negative when unknown.
 */
void gf_progress_format(char *buf, size_t len, double fraction, double speed, double eta_s);

#endif
