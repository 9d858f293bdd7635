/*
 * One chunk through the engine and the noise suppressor, on any engine
 * thread. A chunk is 65536 frames (1.4 s at 48 kHz): the engine mutes a call
 * whose input holds NaN or Inf, so a chunk holding one goes in pieces of
 * GF_OFFLINE_MUTE_FRAMES and only the pieces holding them are muted. The
 * suppressor takes a muted piece as a gap (suppress_bank.h), so that its
 * noise estimate does not learn silence from it. The bad samples are
 * counted for the warning (offline.c): how many, and the first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "offline_internal.h"

int gf_offline_filter_chunk(struct gf_engine *e, float *buf, uint32_t frames, int flush)
{
	return gf_offline_filter_piece(e, buf, buf, frames, flush);
}

/*
 * Filter @p frames frames of @p in into @p out (the same buffer, or apart).
 * If the backend fails (a GPU lost mid-file), fall back to the CPU and redo
 * the piece from the engine's copy of its input: the output stays exact. The
 * engine thread is also the engine's control thread, so it may reap() here.
 */
int gf_offline_filter_piece(struct gf_engine *e, const float *in, float *out, uint32_t frames, int flush)
{
	int err = flush ? gf_engine_flush(e, out, frames) : gf_engine_process(e, in, out, frames);
	if (!err || !gf_engine_failed(e))
		return err;
	gf_engine_reap(e);
	return gf_engine_retry(e, out, frames) == 0 ? 0 : err;
}

static int any_bad(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 1;
	return 0;
}

/* Count the NaN/Inf samples of a piece of @p frames frames from file frame @p at into p->bad. */
static void count_bad(struct gf_offline_pipeline *p, const float *x, uint32_t frames, uint64_t at)
{
	uint32_t ch = p->channels;
	uint64_t n = 0, first = 0;
	for (size_t i = 0; i < (size_t)frames * ch; i++)
		if (!isfinite(x[i]) && !n++)
			first = i;
	if (!n)
		return;
	pthread_mutex_lock(&p->mu); /* striped: filter threads count into the same record */
	uint64_t frame = at + first / ch;
	if (!p->bad.samples || frame < p->bad.first_frame) {
		p->bad.first_frame = frame;
		p->bad.first_channel = (uint32_t)(first % ch);
	}
	p->bad.samples += n;
	p->bad.pieces++;
	pthread_mutex_unlock(&p->mu);
}

/* The suppressor on a piece the engine filtered: a muted one is a gap. */
static int suppress_piece(struct gf_offline_pipeline *p, struct gf_engine *e, float *y, uint32_t frames)
{
	if (gf_engine_muted(e))
		return gf_suppress_bank_gap_by(p->suppress, y, frames, 0);
	return gf_suppress_bank_process(p->suppress, y, frames);
}

/* A chunk holding NaN/Inf, from a copy of its input (the output may be wider: a mixer's). */
static int run_pieces(struct gf_offline_pipeline *p, struct gf_engine *e, float *buf, uint32_t frames,
		      uint64_t at, int *sup_failed)
{
	size_t in_ch = p->channels, out_ch = p->out_channels;
	float *x = malloc((size_t)frames * in_ch * sizeof(float));
	if (!x)
		return GF_E_NOMEM;
	memcpy(x, buf, (size_t)frames * in_ch * sizeof(float));
	int err = 0;
	for (uint32_t off = 0; !err && off < frames; off += GF_OFFLINE_MUTE_FRAMES) {
		uint32_t n = frames - off < GF_OFFLINE_MUTE_FRAMES ? frames - off : GF_OFFLINE_MUTE_FRAMES;
		float *y = buf + (size_t)off * out_ch;
		count_bad(p, x + (size_t)off * in_ch, n, at + off);
		err = gf_offline_filter_piece(e, x + (size_t)off * in_ch, y, n, 0);
		if (!err && p->suppress && (err = suppress_piece(p, e, y, n)) != 0)
			*sup_failed = 1;
	}
	free(x);
	return err;
}

int gf_offline_run_chunk(struct gf_offline_pipeline *p, struct gf_engine *e, float *buf, uint32_t frames,
			 uint64_t at, int *sup_failed)
{
	*sup_failed = 0;
	if (any_bad(buf, (size_t)frames * p->channels))
		return run_pieces(p, e, buf, frames, at, sup_failed);
	int err = gf_offline_filter_piece(e, buf, buf, frames, 0);
	if (!err && p->suppress && (err = suppress_piece(p, e, buf, frames)) != 0)
		*sup_failed = 1;
	return err;
}
