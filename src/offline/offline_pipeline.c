/*
 * The offline pipeline: reader thread -> engine (calling thread) -> writer thread.
 *
 * Chunks circulate through three FIFOs under one mutex (offline_queue.c):
 *   free --reader decodes--> decoded --engine filters in place--> filtered --writer encodes--> free
 * so decoding, filtering and encoding of neighbouring chunks overlap, and memory
 * is GF_OFFLINE_CHUNKS chunks whatever the file's length. Each chunk carries
 * its place in the file (seq): the writer writes in that order, so several
 * engine threads may filter at once (offline_stripe.c). This is not the RT
 * path: a mutex and a condition variable are the simplest correct choice.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gpu.h"
#include "log.h"
#include "offline_internal.h"

/* Fill chunk @p c from the input: whole chunks but the last, even from a pipe
 * (stripes and their histories sit at multiples of the chunk). */
static sf_count_t read_chunk(struct gf_offline_pipeline *p, struct gf_offline_chunk *c)
{
	sf_count_t got = 0;
	while (got < (sf_count_t)p->chunk_frames) {
		sf_count_t n = sf_readf_float(p->in, c->buf + (size_t)got * p->channels,
					      (sf_count_t)p->chunk_frames - got);
		if (n <= 0 || sf_error(p->in) != SF_ERR_NO_ERROR)
			break;
		got += n;
	}
	return got;
}

static void *reader_main(void *arg)
{
	struct gf_offline_pipeline *p = arg;
	uint32_t i;
	while (gf_offline_take(p, &p->free_q, NULL, 0, -1, &i) == 1) {
		struct gf_offline_chunk *c = &p->chunk[i];
		double t0 = (1e3 * gf_now_s());
		sf_count_t n = read_chunk(p, c);
		p->busy_ms[0] += (1e3 * gf_now_s()) - t0;
		if (sf_error(p->in) != SF_ERR_NO_ERROR) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "%s: cannot decode: %s", p->o->input, sf_strerror(p->in));
			gf_offline_give(p, &p->free_q, i);
			gf_offline_fail(p, GF_E_FORMAT, &eb);
			break;
		}
		if (n <= 0) {
			gf_offline_give(p, &p->free_q, i);
			break;
		}
		c->frames = (uint32_t)n;
		c->seq = p->frames_read / p->chunk_frames; /* whole chunks before it */
		c->hist = -1;
		p->frames_read += (uint64_t)n;
		if (p->stripes.threads > 1 && gf_offline_stripe_note_chunk(p, i) != 0) {
			gf_offline_give(p, &p->free_q, i);
			break;
		}
		pthread_mutex_lock(&p->mu);
		p->seq_next = c->seq + 1;
		pthread_mutex_unlock(&p->mu);
		gf_offline_give(p, &p->decoded_q, i);
	}
	pthread_mutex_lock(&p->mu);
	p->input_chunks = p->seq_next;
	pthread_mutex_unlock(&p->mu);
	gf_offline_set_done(p, &p->reader_done);
	return NULL;
}

/* Count samples the output format will clip, and the peak (writer thread). */
static void measure(struct gf_offline_pipeline *p, const float *x, size_t n)
{
	/* On the bits: |x| of a float orders like its bit pattern with the sign
	 * cleared, and integer max/compare vectorize where a float max (NaN
	 * rules) does not: 4x faster, and the writer is the pipeline's slowest stage. */
	int32_t top = 0, over = 0; /* a chunk holds far fewer than 2^31 samples */
	for (size_t k = 0; k < n; k++) {
		int32_t u;
		memcpy(&u, &x[k], sizeof(u));
		u &= 0x7fffffff;
		u = u > 0x7f800000 ? 0 : u; /* NaN: ignored, as a float comparison would */
		top = u > top ? u : top;
		over += u > 0x3f800000; /* |x| > 1.0f */
	}
	float peak;
	memcpy(&peak, &top, sizeof(peak));
	if (peak > p->peak)
		p->peak = peak;
	if (p->clips)
		p->clipped += (uint32_t)over;
}

/*
 * Offline alignment: OUT lines up with IN sample for sample.
 *
 * A linear-phase chain delays everything by (N - 1) / 2 samples. Offline
 * there is no reason to keep that: the writer drops that many frames at the
 * start and the engine runs as many frames of silence at the end, so OUT has
 * IN's length and timing (SoX's `fir` does the same). Only the delay the
 * config build proves to be linear phase is removed (gf_config_build_info):
 * minimum-phase and other filters, delay designs and route delays keep their
 * causal timing. A noise suppressor after the chain (design = "suppress")
 * lags by its frame length: that is removed the same way. --causal keeps the
 * raw causal output; --tail adds the ring-out after the end in either case
 * (the filter's taps - 1 frames, and the suppressor's frames still inside it).
 */
void gf_offline_align_plan(struct gf_offline_align *a, uint32_t taps, uint32_t delay, uint32_t suppress,
			   int tail, int causal)
{
	a->skip = causal ? 0 : (uint64_t)delay + suppress;
	/* without --tail, OUT keeps IN's length: the skipped frames come back from the flush */
	a->flush = tail ? (uint64_t)taps - 1u + suppress : a->skip;
}

uint32_t gf_offline_align_trim(struct gf_offline_align *a, uint32_t frames, uint32_t *offset)
{
	uint32_t drop = a->skip < frames ? (uint32_t)a->skip : frames;
	a->skip -= drop;
	*offset = drop;
	return frames - drop;
}

static void *writer_main(void *arg)
{
	struct gf_offline_pipeline *p = arg;
	uint32_t i;
	while (gf_offline_take_seq(p, &p->filtered_q, &p->engine_done, p->seq_write, &i) == 1) {
		struct gf_offline_chunk *c = &p->chunk[i];
		double t0 = (1e3 * gf_now_s());
		uint32_t off, frames = gf_offline_align_trim(&p->align, c->frames, &off);
		float *buf = c->buf + (size_t)off * p->out_channels;
		measure(p, buf, (size_t)frames * p->out_channels);
		sf_count_t n = frames ? sf_writef_float(p->out, buf, frames) : 0;
		p->busy_ms[2] += (1e3 * gf_now_s()) - t0;
		if (n != (sf_count_t)frames) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "%s: write failed: %s", p->o->output, sf_strerror(p->out));
			gf_offline_give(p, &p->free_q, i);
			gf_offline_fail(p, GF_E_IO, &eb);
			break;
		}
		pthread_mutex_lock(&p->mu);
		p->frames_written += frames;
		p->seq_write++;
		pthread_mutex_unlock(&p->mu);
		gf_offline_give(p, &p->free_q, i);
	}
	return NULL;
}

/* Engine thread (the caller's): filter decoded chunks in place, then the tail. */
static void run_engine(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog)
{
	uint32_t i;
	int r;
	while ((r = gf_offline_take(p, &p->decoded_q, &p->reader_done, 1, -1, &i)) == 1) {
		struct gf_offline_chunk *c = &p->chunk[i];
		double t0 = (1e3 * gf_now_s());
		int sup_failed, err = gf_offline_run_chunk(p, e, c, p->frames_filtered, &sup_failed);
		p->busy_ms[1] += (1e3 * gf_now_s()) - t0;
		if (err) {
			gf_offline_chunk_failed(p, i, p->frames_filtered, err, sup_failed);
			return;
		}
		p->frames_filtered += c->frames;
		gf_offline_give(p, &p->filtered_q, i);
		gf_progress_update(prog, p->frames_filtered);
	}
	if (r == 0)
		gf_offline_flush_tail(p, e);
}

static void free_queues(struct gf_offline_pipeline *p)
{
	free(p->free_q.idx);
	free(p->decoded_q.idx);
	free(p->filtered_q.idx);
	for (uint32_t i = 0; i < p->n_hist; i++)
		free(p->hist_buf[i]);
	free(p->hist_buf);
	free(p->hist_used);
}

void gf_offline_pipeline_free(struct gf_offline_pipeline *p)
{
	if (!p->inited)
		return;
	for (uint32_t i = 0; i < p->nchunks; i++) {
		free(p->chunk[i].piece);
		if (p->chunk[i].pinned && gf_cuda_unpin(p->chunk[i].buf))
			continue; /* kept pinned behind GPU work that may not end: never freed */
		free(p->chunk[i].buf);
	}
	free(p->chunk);
	free_queues(p);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	memset(p, 0, sizeof(*p));
}

static int alloc_queues(struct gf_offline_pipeline *p, uint32_t n_hist, uint32_t hist_frames)
{
	struct gf_offline_fifo *q[3] = {&p->free_q, &p->decoded_q, &p->filtered_q};
	for (int k = 0; k < 3; k++) {
		q[k]->idx = calloc(p->nchunks, sizeof(uint32_t));
		q[k]->cap = p->nchunks;
		if (!q[k]->idx)
			return GF_E_NOMEM;
	}
	p->hist_buf = calloc(n_hist ? n_hist : 1, sizeof(float *));
	p->hist_used = calloc(n_hist ? n_hist : 1, 1);
	if (!p->hist_buf || !p->hist_used)
		return GF_E_NOMEM;
	for (; p->n_hist < n_hist; p->n_hist++) {
		p->hist_buf[p->n_hist] = malloc((size_t)hist_frames * p->channels * sizeof(float));
		if (!p->hist_buf[p->n_hist])
			return GF_E_NOMEM;
	}
	return 0;
}

static int pipeline_alloc(struct gf_offline_pipeline *p, uint32_t channels, uint32_t out_channels,
			  uint32_t chunk_frames, int pin, uint32_t nchunks, uint32_t n_hist,
			  uint32_t hist_frames)
{
	memset(p, 0, sizeof(*p));
	p->inited = 1;
	p->pin = pin;
	p->channels = channels;
	p->out_channels = out_channels;
	p->chunk_frames = chunk_frames;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	p->chunk = calloc(nchunks, sizeof(*p->chunk));
	if (!p->chunk)
		return GF_E_NOMEM;
	size_t bytes =
		(size_t)chunk_frames * (channels > out_channels ? channels : out_channels) * sizeof(float);
	for (; p->nchunks < nchunks; p->nchunks++) {
		uint32_t i = p->nchunks;
		/* run_pieces' copy (offline_chunk.c): here, not per chunk holding NaN/Inf mid-file */
		float *piece = malloc((size_t)GF_OFFLINE_MUTE_FRAMES * channels * sizeof(float));
		void *mem = NULL;
		if (!piece || posix_memalign(&mem, 4096, bytes) != 0) {
			free(piece);
			return GF_E_NOMEM;
		}
		p->chunk[i].buf = mem;
		p->chunk[i].piece = piece;
		/*
		 * Pinned chunks let the CUDA backend DMA directly; unpinned ones work
		 * too. The CPU backend skips this: pinning would create a CUDA context.
		 */
		int err = pin ? gf_cuda_pin(mem, bytes) : GF_E_UNSUPPORTED;
		p->chunk[i].pinned = err == 0;
		if (err && err != GF_E_UNSUPPORTED)
			gf_debug("chunk %u not pinned: %s", i, gf_strerror(err));
	}
	return alloc_queues(p, n_hist, hist_frames);
}

int gf_offline_pipeline_prepare(struct gf_offline_pipeline *p, const struct gf_offline_opts *o,
				uint32_t channels, uint32_t out_channels, uint32_t chunk_frames, int pin,
				const struct gf_offline_stripes *st)
{
	struct gf_offline_stripes one = {.threads = 1, .stripe_chunks = 1, .chunks = GF_OFFLINE_CHUNKS};
	if (!st || st->threads <= 1)
		st = &one;
	/* A history slot per stripe that can wait for its thread, two spare (offline_stripe.c). */
	uint32_t n_hist = st->threads > 1 ? st->chunks / st->stripe_chunks + 2 : 0;
	/* A lane's files mostly share a shape: keep the (pinned) chunks then. */
	if (!p->inited || p->channels != channels || p->out_channels != out_channels ||
	    p->chunk_frames != chunk_frames || p->pin != pin || p->nchunks != st->chunks ||
	    p->n_hist != n_hist || p->stripes.hist_frames != st->hist_frames) {
		gf_offline_pipeline_free(p);
		int err = pipeline_alloc(p, channels, out_channels, chunk_frames, pin, st->chunks, n_hist,
					 st->hist_frames);
		if (err) {
			gf_offline_pipeline_free(p);
			return err;
		}
	}
	p->stripes = *st;
	gf_offline_queues_reset(p);
	memset(p->hist_used, 0, p->n_hist ? p->n_hist : 1);
	p->reader_hist = -1;
	p->stripe_next = 0;
	p->threads_running = 0;
	p->seq_next = p->seq_write = p->input_chunks = p->stripe_nonfinite = 0;
	memset(&p->bad, 0, sizeof(p->bad));
	p->reader_done = p->engine_done = p->failed = 0;
	memset(&p->eb, 0, sizeof(p->eb));
	p->o = o;
	p->suppress = NULL;
	p->in = p->out = NULL;
	p->clips = 0;
	p->frames_read = p->frames_filtered = p->frames_written = p->clipped = 0;
	p->peak = 0.0f;
	memset(p->busy_ms, 0, sizeof(p->busy_ms));
	return 0;
}

/* Run the three stages; joins both threads before returning. */
int gf_offline_pipeline_run(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog,
			    struct gf_errbuf *eb)
{
	pthread_t reader, writer;
	if (pthread_create(&reader, NULL, reader_main, p) != 0) {
		gf_errbuf_set(eb, "cannot start the reader thread");
		return GF_E_SYSTEM;
	}
	if (pthread_create(&writer, NULL, writer_main, p) != 0) {
		gf_errbuf_set(eb, "cannot start the writer thread");
		gf_offline_fail(p, GF_E_SYSTEM, eb);
		pthread_join(reader, NULL);
		*eb = p->eb;
		return p->failed;
	}
	if (p->stripes.threads > 1)
		gf_offline_stripe_run(p, e, prog);
	else
		run_engine(p, e, prog);
	gf_offline_set_done(p, &p->engine_done);
	pthread_join(reader, NULL);
	pthread_join(writer, NULL);
	if (p->failed)
		*eb = p->eb;
	return p->failed;
}
