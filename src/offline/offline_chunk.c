/*
 * One chunk through the chain (the engine, then the noise suppressor:
 * gf_chain_process, chain_run.h), on any engine thread. A chunk is 65536
 * frames (1.4 s at 48 kHz): the engine mutes a call whose input holds NaN or
 * Inf, so a chunk holding one goes in pieces of GF_OFFLINE_MUTE_FRAMES and
 * only the pieces holding them are muted. The suppressor takes a muted piece
 * as a gap (suppress_bank.h), so that its noise estimate does not learn
 * silence from it. The bad samples are counted for the warning (offline.c):
 * how many, and the first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "offline_internal.h"

struct gf_chain_run gf_offline_chain(const struct gf_offline_pipeline *p, struct gf_engine *e)
{
	/* The engine thread is also the engine's control thread, so the retry may reap() there. */
	return (struct gf_chain_run){.engine = e, .suppress = p->suppress, .retry = 1};
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

/* A chunk holding NaN/Inf, piece by piece, each piece's input copied to c->piece first: its output
 * (a mixer's may be wider) overwrites its input in c->buf. Where the output is wider, the input first
 * moves to the buffer's end (it holds frames x out_ch), so that piece k's output, which ends at frame
 * off + n of out_ch channels, never reaches the input still unread, which starts at the same frame of
 * in_ch channels past the shift: (off + n) x out_ch <= shift + (off + n) x in_ch while off + n <=
 * frames. */
static int run_pieces(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_offline_chunk *c,
		      uint64_t at, int *sup_failed)
{
	size_t in_ch = p->channels, out_ch = p->out_channels, frames = c->frames;
	size_t shift = out_ch > in_ch ? frames * (out_ch - in_ch) : 0;
	float *in = c->buf + shift;
	if (shift)
		memmove(in, c->buf, frames * in_ch * sizeof(float));
	struct gf_chain_run chain = gf_offline_chain(p, e);
	int err = 0, sup_err = 0;
	for (uint32_t off = 0; !err && off < frames; off += GF_OFFLINE_MUTE_FRAMES) {
		uint32_t n = frames - off < GF_OFFLINE_MUTE_FRAMES ? frames - off : GF_OFFLINE_MUTE_FRAMES;
		memcpy(c->piece, in + (size_t)off * in_ch, (size_t)n * in_ch * sizeof(float));
		count_bad(p, c->piece, n, at + off);
		err = gf_chain_process(&chain, c->piece, NULL, c->buf + (size_t)off * out_ch, n, 0, &sup_err);
	}
	*sup_failed = sup_err != 0;
	return err;
}

int gf_offline_run_chunk(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_offline_chunk *c,
			 uint64_t at, int *sup_failed)
{
	*sup_failed = 0;
	if (any_bad(c->buf, (size_t)c->frames * p->channels))
		return run_pieces(p, e, c, at, sup_failed);
	struct gf_chain_run chain = gf_offline_chain(p, e);
	int sup_err, err = gf_chain_process(&chain, c->buf, NULL, c->buf, c->frames, 0, &sup_err);
	*sup_failed = sup_err != 0;
	return err;
}

void gf_offline_chunk_failed(struct gf_offline_pipeline *p, uint32_t i, uint64_t frame, int err,
			     int sup_failed)
{
	struct gf_errbuf eb;
	if (sup_failed)
		gf_errbuf_set(
			&eb,
			"the noise suppressor on the GPU failed at frame %llu: %s (the file is not written)",
			(unsigned long long)frame, gf_strerror(err));
	else
		gf_errbuf_set(&eb, "filtering failed at frame %llu: %s", (unsigned long long)frame,
			      gf_strerror(err));
	gf_offline_give(p, &p->free_q, i);
	gf_offline_fail(p, err, &eb);
}

/* The ring-out from input silence: --tail's taps-1 frames, or the frames alignment skipped. */
int gf_offline_flush_tail(struct gf_offline_pipeline *p, struct gf_engine *e)
{
	uint64_t tail = p->align.flush;
	struct gf_chain_run chain = gf_offline_chain(p, e);
	uint32_t i;
	while (tail > 0 && gf_offline_take(p, &p->free_q, NULL, 0, -1, &i) == 1) {
		struct gf_offline_chunk *c = &p->chunk[i];
		c->frames = tail < p->chunk_frames ? (uint32_t)tail : p->chunk_frames;
		/* frames <= max_block: one call; the suppressor's ring-out follows the filter's */
		int sup_err, err = gf_chain_process(&chain, NULL, NULL, c->buf, c->frames, 0, &sup_err);
		if (err) {
			gf_offline_chunk_failed(p, i, p->frames_read, err, sup_err != 0);
			return err;
		}
		tail -= c->frames;
		pthread_mutex_lock(&p->mu);
		c->seq = p->seq_next++;
		pthread_mutex_unlock(&p->mu);
		gf_offline_give(p, &p->filtered_q, i);
	}
	return tail ? -1 : 0;
}
