/*
 * The suppressors of a stream's channels. Each suppressed channel has a mono
 * suppressor of its own, so that the chains of different routes may set
 * different reductions and noise samples; a block is taken apart into one
 * channel at a time through a small scratch buffer (copies cost little next
 * to the transforms). Channels without a suppressor go through a delay line
 * of the suppressors' latency, which depends on the rate alone. Offline, the
 * channels the CPU runs are split over a pool of threads (suppress_pool.h),
 * each with a scratch buffer of its own: channels share no state, so each
 * thread's run of them is the same computation as on one thread.
 *
 * Asked for the GPU (gf_suppress_bank_new_ex), the largest set of channels
 * that share identical parameters runs in one GPU suppressor when it has at
 * least GF_SUPPRESS_GPU_MIN_CHANNELS: gathered into a contiguous interleaved
 * buffer made at new() and scattered back. Their CPU suppressors are built
 * too and kept on standby. A hop not back by the deadline is late, not dead:
 * the group's channels of that call are muted and counted (gpu_late), the
 * hop stays in flight and the GPU suppressor collects it at the next call
 * (suppress_gpu.h: the stream stays whole). Only a hop that fails, or is hung
 * (in flight GF_SUPPRESS_GPU_HOP_WAIT_NS), switches the bank to the standby
 * suppressors, with nothing to allocate on the audio thread. That piece is
 * muted; the standby suppressors start from silence then (the first frame,
 * about 24 ms, is their latency and adaptation).
 */
#include "suppress_bank.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "neural_bank.h"
#include "test_hook.h"
#include "suppress_gpu.h"
#include "suppress_hum.h"
#include "suppress_pool.h"
#include "suppress_return.h"

/* Frames taken apart per pass: any call size is handled in pieces of this. */
#define SCRATCH_FRAMES 1024u
/* The return to the GPU (gf_suppress_bank_try_return, suppress_return.h): probe calls of
 * silence, each of SCRATCH_FRAMES frames (at least one hop). */
#define PROBE_CALLS 3

/* A part of the group: one GPU suppressor (its own stream) for a contiguous run of the group's
 * channels. A group cut over threads (offline and batch) runs each part's copies and hops on its
 * own thread: the host's per-sample copies, which bound one suppressor at thousands of channels
 * (bench_suppress: "split chRT" against "GPU chRT"), spread over the cores. */
struct gpu_part {
	uint32_t first, n; /* the group's channels chan[first .. first + n) */
	int in_place;	   /* those are one run of the interleave: the GPU's exchange reads them there */
	float *buf;	   /* SCRATCH_FRAMES x n, interleaved (where not in place) */
	struct gf_suppress_gpu *gpu;
	int err; /* this piece's answer */
};

/* The fewest channels a part of a group cut over threads runs: below, the parts together are
 * slower than one suppressor for all of them (bench_suppress on an H100: 1024 channels in 16
 * parts about 1.3x one suppressor's rate, 256 in 16 parts 0.4x; 4096 in 16 parts 2.6x). */
#define GPU_PART_MIN 512u

/* The channels that run in the GPU, in parts (one unless cut over threads). */
struct gpu_group {
	uint32_t n;	/* channels */
	uint32_t *chan; /* n: their channel numbers, ascending */
	uint32_t parts; /* 1, or more on a bank over threads */
	struct gpu_part *part;
	uint64_t wait_ns; /* a call's longest wait for the GPU; 0: GF_SUPPRESS_GPU_HOP_WAIT_NS a hop */
	struct gf_suppress *fake; /* GPUFIR_FAULT_SUPPRESS_FAKE_GPU: a CPU suppressor in part 0's place */
	int64_t fail_after;	  /* GPUFIR_FAULT_SUPPRESS_GPU_AFTER: calls that pass first; -1 off */
	int64_t hang_after;	  /* GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER: the same, for a hop never back */
	int64_t late_after;	  /* GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER: the same, for one late hop */
	uint64_t hang_since;	  /* when the hung hop was submitted (its call's start) */
	uint64_t calls;
};

struct gf_suppress_bank {
	uint32_t channels, latency, active;
	struct gf_suppress **sup; /* per channel; NULL: delayed only. The group's: its standby */
	uint8_t *grouped;	  /* per channel: 1 where the group runs it while on_gpu */
	float *delay;		  /* latency frames per channel, interleaved */
	uint32_t delay_pos;
	float *scratch;		       /* SCRATCH_FRAMES per part of the pool (one without) */
	struct gf_suppress_pool *pool; /* opts.threads > 1: the CPU channels spread over it */
	struct gpu_group *g;
	_Atomic float *floor;	       /* per channel: the gain's floor the control thread set (suppress.h) */
	_Atomic int on_gpu;	       /* the group runs (the audio thread clears it on a failure, the
					  control thread sets it again: gf_suppress_bank_try_return) */
	struct gf_suppress_return ret; /* control thread: the wait before a return */
	_Atomic uint64_t gpu_returns;  /* returns to the GPU after a switch */
	_Atomic uint64_t gpu_failures; /* switches to the standby */
	_Atomic uint64_t gpu_late;     /* calls whose group was muted for a late hop */
	struct gf_neural_bank *neural; /* the neural stage after the suppressors; NULL: none */
};

static void group_free(struct gpu_group *g)
{
	if (!g)
		return;
	for (uint32_t k = 0; g->part && k < g->parts; k++) {
		gf_suppress_gpu_free(g->part[k].gpu);
		free(g->part[k].buf);
	}
	gf_suppress_free(g->fake);
	free(g->part);
	free(g->chan);
	free(g);
}

void gf_suppress_bank_free(struct gf_suppress_bank *b)
{
	if (!b)
		return;
	for (uint32_t c = 0; b->sup && c < b->channels; c++)
		gf_suppress_free(b->sup[c]);
	group_free(b->g);
	gf_suppress_pool_free(b->pool);
	gf_neural_bank_free(b->neural);
	free(b->sup);
	free(b->grouped);
	free((void *)b->floor);
	free(b->delay);
	free(b->scratch);
	free(b);
}

static int make_suppressors(struct gf_suppress_bank *b, const struct gf_suppress_params *const *pc,
			    uint32_t rate, struct gf_errbuf *eb)
{
	for (uint32_t c = 0; c < b->channels; c++) {
		if (!pc[c])
			continue;
		int r = gf_suppress_new(pc[c], 1, rate, &b->sup[c], eb);
		if (r)
			return r;
		uint32_t n = gf_suppress_latency(b->sup[c]);
		if (b->active && n != b->latency) { /* suppress.h: N depends on the rate alone */
			gf_errbuf_set(eb, "suppressors of one rate disagree on their latency (%u, %u frames)",
				      b->latency, n);
			return GF_E_INVAL;
		}
		b->latency = n;
		b->active++;
		atomic_init(&b->floor[c], gf_suppress_floor_gain(pc[c]->reduction_db, 0));
	}
	return 0;
}

/* ---- the GPU group (set up on the control thread) ---------------------- */

/* The same hum removed from the start, up to the same harmonic (later sets reach all alike). */
static int same_hum(const struct gf_suppress_params *a, const struct gf_suppress_params *b)
{
	if (a->hum_harmonics != b->hum_harmonics || !a->hum != !b->hum)
		return 0;
	return !a->hum ||
	       (a->hum->f0_hz == b->hum->f0_hz && a->hum->n == b->hum->n &&
		memcmp(a->hum->harmonic, b->hum->harmonic, a->hum->n * sizeof(a->hum->harmonic[0])) == 0);
}

static int same_params(const struct gf_suppress_params *a, const struct gf_suppress_params *b)
{
	if (a == b)
		return 1;
	if (!a || !b || a->reduction_db != b->reduction_db || a->highpass_hz != b->highpass_hz ||
	    a->noise_frames != b->noise_frames || !same_hum(a, b))
		return 0;
	if (a->noise == b->noise)
		return 1;
	return a->noise && b->noise && memcmp(a->noise, b->noise, a->noise_frames * sizeof(float)) == 0;
}

/* The first channel of the largest set sharing identical parameters, and the set's size. */
static uint32_t largest_set(const struct gf_suppress_params *const *pc, uint32_t channels, uint32_t *first)
{
	uint32_t best = 0;
	for (uint32_t c = 0; c < channels; c++) {
		uint32_t n = 0;
		for (uint32_t d = c; pc[c] && d < channels; d++)
			n += same_params(pc[c], pc[d]);
		if (n > best) {
			best = n;
			*first = c;
		}
	}
	return best;
}

/* The parts' GPU suppressors; GF_E_* from the first that cannot be made. */
static int parts_new(struct gpu_group *g, const struct gf_suppress_params *p, uint32_t rate, int device,
		     struct gf_errbuf *eb)
{
	for (uint32_t k = 0; k < g->parts; k++) {
		int err = gf_suppress_gpu_new(p, g->part[k].n, rate, device, &g->part[k].gpu, eb);
		if (err)
			return err;
	}
	return 0;
}

/* The group's suppressors: the GPU's, or (test hook, a group of one part) a CPU one in its place;
 * GF_E_* if neither. */
static int group_backend(struct gpu_group *g, const struct gf_suppress_params *p, uint32_t rate, int device,
			 struct gf_errbuf *eb)
{
	int err = parts_new(g, p, rate, device, eb);
	if (err && g->parts == 1 && gf_test_hook_value("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "suppress") > 0) {
		gf_warn("suppress: test hook GPUFIR_FAULT_SUPPRESS_FAKE_GPU: a CPU suppressor of %u channels "
			"stands in for the GPU's",
			g->n);
		err = gf_suppress_new(p, g->n, rate, &g->fake, eb);
	}
	g->fail_after = gf_test_hook_value("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "suppress");
	if (!err && g->fail_after >= 0)
		gf_warn("suppress: test hook GPUFIR_FAULT_SUPPRESS_GPU_AFTER=%lld: the GPU suppressor's call "
			"%lld will fail",
			(long long)g->fail_after, (long long)g->fail_after + 1);
	g->hang_after = gf_test_hook_value("GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER", "suppress");
	if (!err && g->hang_after >= 0)
		gf_warn("suppress: test hook GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER=%lld: the GPU suppressor's "
			"call %lld will not be back before its deadline",
			(long long)g->hang_after, (long long)g->hang_after + 1);
	g->late_after = gf_test_hook_value("GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER", "suppress");
	if (!err && g->late_after >= 0)
		gf_warn("suppress: test hook GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER=%lld: the GPU suppressor's "
			"call %lld will be back after its deadline",
			(long long)g->late_after, (long long)g->late_after + 1);
	return err;
}

/* A group of @p n channels in @p parts parts of about equal size, each with its buffer. */
static struct gpu_group *group_alloc(uint32_t n, uint32_t parts)
{
	struct gpu_group *g = calloc(1, sizeof(*g));
	if (!g || !(g->chan = malloc(n * sizeof(uint32_t))) || !(g->part = calloc(parts, sizeof(*g->part)))) {
		group_free(g);
		return NULL;
	}
	g->n = n;
	g->parts = parts;
	for (uint32_t k = 0; k < parts; k++) {
		struct gpu_part *pt = &g->part[k];
		pt->first = (uint32_t)((uint64_t)n * k / parts);
		pt->n = (uint32_t)((uint64_t)n * (k + 1) / parts) - pt->first;
		if (!(pt->buf = malloc((size_t)SCRATCH_FRAMES * pt->n * sizeof(float)))) {
			group_free(g);
			return NULL;
		}
	}
	return g;
}

/* Parts for a group of @p n channels on a bank over @p threads threads: one without threads, else
 * as many as the threads while each keeps GPU_PART_MIN channels. */
static uint32_t parts_for(uint32_t n, uint32_t threads)
{
	uint32_t parts = n / GPU_PART_MIN;
	parts = parts < threads ? parts : threads;
	return parts > 1 ? parts : 1;
}

static int group_new(struct gf_suppress_bank *b, const struct gf_suppress_params *const *pc, uint32_t first,
		     uint32_t n, uint32_t rate, const struct gf_suppress_bank_opts *o, struct gf_errbuf *eb)
{
	struct gpu_group *g = group_alloc(n, parts_for(n, o->threads));
	if (!g)
		return GF_E_NOMEM;
	g->wait_ns = 1000ull * o->deadline_us;
	gf_suppress_return_init(&b->ret,
				1000000ull * (o->return_ms ? o->return_ms : GF_SUPPRESS_RETURN_DEFAULT_MS));
	for (uint32_t c = first, k = 0; c < b->channels; c++)
		if (same_params(pc[first], pc[c]))
			g->chan[k++] = c;
	for (uint32_t k = 0; g->parts > 1 && k < g->parts; k++) {
		struct gpu_part *pt = &g->part[k];
		pt->in_place = g->chan[pt->first + pt->n - 1] - g->chan[pt->first] == pt->n - 1;
	}
	int err = group_backend(g, pc[first], rate, o->gpu_index, eb);
	if (!err && (g->fake ? gf_suppress_latency(g->fake) : gf_suppress_gpu_latency(g->part[0].gpu)) !=
			    b->latency) {
		gf_errbuf_set(eb, "the GPU suppressor's latency differs from the CPU's");
		err = GF_E_INVAL;
	}
	if (err) {
		group_free(g);
		return err;
	}
	for (uint32_t k = 0; k < n; k++)
		b->grouped[g->chan[k]] = 1;
	b->g = g;
	atomic_store(&b->on_gpu, 1);
	return 0;
}

/* Asked for the GPU: the largest set of identical suppressors there, if large enough and a GPU
 * suppressor can be made; else everything stays on the CPU (said once, here). */
static int try_gpu(struct gf_suppress_bank *b, const struct gf_suppress_params *const *pc, uint32_t rate,
		   const struct gf_suppress_bank_opts *o)
{
	uint32_t first = 0, n = largest_set(pc, b->channels, &first);
	if (n < GF_SUPPRESS_GPU_MIN_CHANNELS)
		return 0; /* the CPU is faster for so few (bench_suppress) */
	struct gf_errbuf why = {{0}};
	int err = group_new(b, pc, first, n, rate, o, &why);
	if (err == GF_E_NOMEM)
		return err;
	if (err)
		gf_info("suppressor: %u channels on the CPU: the GPU cannot run them (%s)", n,
			why.msg[0] ? why.msg : gf_strerror(err));
	return 0;
}

/* The pool the CPU's channels are spread over: no more parts than the channels it runs (those of a
 * GPU group are the GPU's; its standby, only after a failure, runs too but is not planned for; a mono
 * bank runs in place on the caller's thread), nor fewer than the GPU group's parts, and a scratch
 * buffer for each part. */
static int make_pool(struct gf_suppress_bank *b, uint32_t threads, struct gf_errbuf *eb)
{
	uint32_t cpu = b->active - (b->g ? b->g->n : 0);
	uint32_t parts = threads < cpu ? threads : cpu;
	if (b->g && b->g->parts > parts)
		parts = b->g->parts;
	if (b->channels == 1 || parts < 2)
		parts = 1;
	else {
		int err = gf_suppress_pool_new(parts, &b->pool, eb);
		if (err)
			return err;
	}
	b->scratch = malloc((size_t)SCRATCH_FRAMES * parts * sizeof(float));
	return b->scratch ? 0 : GF_E_NOMEM;
}

int gf_suppress_bank_new_ex(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			    uint32_t rate, const struct gf_suppress_bank_opts *o,
			    struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_suppress_bank *b = calloc(1, sizeof(*b));
	if (!b) {
		gf_neural_bank_free(o ? o->neural : NULL);
		return GF_E_NOMEM;
	}
	b->channels = channels;
	b->neural = o ? o->neural : NULL;
	int r = GF_E_NOMEM;
	if (!(b->sup = calloc(channels ? channels : 1, sizeof(*b->sup))) ||
	    !(b->grouped = calloc(channels ? channels : 1, 1)) ||
	    !(b->floor = calloc(channels ? channels : 1, sizeof(*b->floor))))
		goto fail;
	if ((r = make_suppressors(b, per_channel, rate, eb)))
		goto fail;
	if (!b->active && !b->neural) {
		gf_errbuf_set(eb, "no channel has a suppressor");
		r = GF_E_INVAL;
		goto fail;
	}
	r = GF_E_NOMEM;
	if (b->active && b->active < channels &&
	    !(b->delay = calloc((size_t)b->latency * channels, sizeof(float))))
		goto fail;
	if (o && o->gpu && b->active && (r = try_gpu(b, per_channel, rate, o)))
		goto fail;
	if ((r = make_pool(b, o ? o->threads : 1, eb)))
		goto fail;
	*out = b;
	return 0;
fail:
	gf_suppress_bank_free(b);
	return r;
}

int gf_suppress_bank_new(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			 uint32_t rate, struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	return gf_suppress_bank_new_ex(per_channel, channels, rate, NULL, out, eb);
}

uint32_t gf_suppress_bank_latency(const struct gf_suppress_bank *b)
{
	return b ? b->latency + gf_neural_bank_latency(b->neural) : 0;
}

uint32_t gf_suppress_bank_suppressor_latency(const struct gf_suppress_bank *b)
{
	return b ? b->latency : 0;
}

struct gf_neural_bank *gf_suppress_bank_neural(const struct gf_suppress_bank *b)
{
	return b ? b->neural : NULL;
}

uint32_t gf_suppress_bank_active(const struct gf_suppress_bank *b)
{
	return b ? b->active : 0;
}

uint32_t gf_suppress_bank_gpu_channels(const struct gf_suppress_bank *b)
{
	return b && b->g && atomic_load(&b->on_gpu) ? b->g->n : 0;
}

uint32_t gf_suppress_bank_threads(const struct gf_suppress_bank *b)
{
	return gf_suppress_pool_parts(b ? b->pool : NULL);
}

uint64_t gf_suppress_bank_gpu_failures(const struct gf_suppress_bank *b)
{
	return b ? atomic_load(&b->gpu_failures) : 0;
}

uint64_t gf_suppress_bank_gpu_returns(const struct gf_suppress_bank *b)
{
	return b ? atomic_load(&b->gpu_returns) : 0;
}

uint64_t gf_suppress_bank_gpu_late(const struct gf_suppress_bank *b)
{
	return b ? atomic_load(&b->gpu_late) : 0;
}

void gf_suppress_bank_where(const struct gf_suppress_bank *b, char *buf, size_t len)
{
	uint32_t on_gpu = gf_suppress_bank_gpu_channels(b), active = gf_suppress_bank_active(b);
	uint32_t threads = gf_suppress_bank_threads(b);
	char spread[32] = "";
	if (threads > 1)
		snprintf(spread, sizeof(spread), " (%u threads)", threads);
	char parts[48] = "";
	if (on_gpu && b->g->parts > 1)
		snprintf(parts, sizeof(parts), " in %u parts%s", b->g->parts,
			 on_gpu == active ? " over as many threads" : "");
	int n = 0;
	if (!active)
		n = snprintf(buf, len, "no suppressor");
	else if (!on_gpu)
		n = snprintf(buf, len, "%u channel%s on the CPU%s", active, active == 1 ? "" : "s", spread);
	else if (on_gpu == active)
		n = snprintf(buf, len, "%u channels on the GPU%s", on_gpu, parts);
	else
		n = snprintf(buf, len, "%u channels on the GPU%s, %u on the CPU%s", on_gpu, parts,
			     active - on_gpu, spread);
	if (b && b->neural && n >= 0 && (size_t)n < len) {
		uint32_t k = gf_neural_bank_active(b->neural);
		if (gf_neural_bank_on_gpu(b->neural))
			snprintf(buf + n, len - (size_t)n, "; neural stage: %u channel%s on the GPU", k,
				 k == 1 ? "" : "s");
		else
			snprintf(buf + n, len - (size_t)n,
				 "; neural stage: %u channel%s on the CPU (%u threads)", k, k == 1 ? "" : "s",
				 gf_neural_bank_threads(b->neural));
	}
}

int gf_suppress_bank_set_floor(struct gf_suppress_bank *b, const float *per_channel)
{
	int split = 0;
	for (uint32_t c = 0; c < b->channels; c++) {
		if (!b->sup[c])
			continue;
		float g = per_channel[c];
		/* the group runs one floor, its first channel's */
		if (b->g && b->grouped[c] && g != per_channel[b->g->chan[0]]) {
			g = per_channel[b->g->chan[0]];
			split = 1;
		}
		atomic_store_explicit(&b->floor[c], g, memory_order_relaxed);
	}
	return split ? GF_E_INVAL : 0;
}

float gf_suppress_bank_floor(const struct gf_suppress_bank *b, uint32_t ch)
{
	return ch < b->channels && b->sup[ch] ? atomic_load_explicit(&b->floor[ch], memory_order_relaxed)
					      : 1.0f;
}

/* ---- process (audio thread) -------------------------------------------- */

/* The floors the control thread set, to every suppressor (which ramps to a new one): the group's
 * from its first channel, only while it runs (off the GPU, a return's probe on the control thread
 * owns it; back on, the next call sets it). Each floor is one float, read whole: no order with
 * anything else is needed. */
static void apply_floors(struct gf_suppress_bank *b)
{
	for (uint32_t c = 0; c < b->channels; c++)
		if (b->sup[c])
			gf_suppress_set_floor(b->sup[c],
					      atomic_load_explicit(&b->floor[c], memory_order_relaxed));
	if (!b->g || !atomic_load_explicit(&b->on_gpu, memory_order_acquire))
		return;
	float g = atomic_load_explicit(&b->floor[b->g->chan[0]], memory_order_relaxed);
	for (uint32_t k = 0; !b->g->fake && k < b->g->parts; k++)
		gf_suppress_gpu_set_floor(b->g->part[k].gpu, g);
	if (b->g->fake)
		gf_suppress_set_floor(b->g->fake, g);
}

/* Channel @p c of @p frames frames through its suppressor, via @p scratch. */
static void suppress_channel(struct gf_suppress_bank *b, uint32_t c, float *scratch, float *buf,
			     uint32_t frames)
{
	uint32_t ch = b->channels;
	for (uint32_t i = 0; i < frames; i++)
		scratch[i] = buf[(size_t)i * ch + c];
	gf_suppress_process(b->sup[c], scratch, frames);
	for (uint32_t i = 0; i < frames; i++)
		buf[(size_t)i * ch + c] = scratch[i];
}

/* The channels the CPU runs over one stretch of a call. */
struct cpu_job {
	struct gf_suppress_bank *b;
	float *buf;
	uint32_t frames;
	int on_gpu; /* the group's channels are the GPU's, not the CPU's */
};

static int on_cpu(const struct gf_suppress_bank *b, uint32_t c, int on_gpu)
{
	return b->sup[c] && !(on_gpu && b->grouped[c]);
}

/* Part @p part of @p parts of a job (gf_suppress_pool_fn): a contiguous run of the CPU's channels,
 * an even share of them, each channel's state and columns touched by this part alone, in pieces
 * of SCRATCH_FRAMES from the call's start as on one thread (so the output is the same bits). */
static void cpu_part(void *arg, uint32_t part, uint32_t parts)
{
	const struct cpu_job *j = arg;
	struct gf_suppress_bank *b = j->b;
	uint32_t n = 0, first = 0, last = 0;
	for (uint32_t c = 0; c < b->channels; c++)
		n += (uint32_t)on_cpu(b, c, j->on_gpu);
	uint32_t lo = (uint32_t)((uint64_t)n * part / parts),
		 hi = (uint32_t)((uint64_t)n * (part + 1) / parts);
	for (uint32_t c = 0, k = 0; c < b->channels; c++) {
		if (!on_cpu(b, c, j->on_gpu))
			continue;
		first = k == lo ? c : first;
		last = k < hi ? c + 1 : last;
		k++;
	}
	float *scratch = b->scratch + (size_t)SCRATCH_FRAMES * part;
	for (uint32_t done = 0; lo < hi && done < j->frames; done += SCRATCH_FRAMES) {
		uint32_t m = j->frames - done < SCRATCH_FRAMES ? j->frames - done : SCRATCH_FRAMES;
		for (uint32_t c = first; c < last; c++)
			if (on_cpu(b, c, j->on_gpu))
				suppress_channel(b, c, scratch, j->buf + (size_t)done * b->channels, m);
	}
}

/* Every channel the CPU runs, over the pool's threads where there is one. */
static void run_cpu(struct gf_suppress_bank *b, float *buf, uint32_t frames, int on_gpu)
{
	struct cpu_job j = {b, buf, frames, on_gpu};
	if (b->pool)
		gf_suppress_pool_run(b->pool, cpu_part, &j);
	else
		cpu_part(&j, 0, 1);
}

/* The channels without a suppressor, each latency frames late. */
static void delay_rest(struct gf_suppress_bank *b, float *buf, uint32_t frames)
{
	uint32_t ch = b->channels;
	for (uint32_t i = 0; i < frames; i++) {
		float *d = b->delay + (size_t)b->delay_pos * ch, *x = buf + (size_t)i * ch;
		for (uint32_t c = 0; c < ch; c++) {
			if (b->sup[c])
				continue;
			float y = d[c];
			d[c] = x[c];
			x[c] = y;
		}
		b->delay_pos = b->delay_pos + 1 == b->latency ? 0 : b->delay_pos + 1;
	}
}

/* Copy part @p pt's channels of @p buf into (@p in) or out of its contiguous buffer. */
static void part_copy(const struct gpu_group *g, struct gpu_part *pt, float *buf, uint32_t channels,
		      uint32_t frames, int in)
{
	const uint32_t *chan = g->chan + pt->first;
	for (uint32_t i = 0; i < frames; i++) {
		float *x = buf + (size_t)i * channels, *y = pt->buf + (size_t)i * pt->n;
		for (uint32_t k = 0; k < pt->n; k++) {
			if (in)
				y[k] = x[chan[k]];
			else
				x[chan[k]] = y[k];
		}
	}
}

/* The test hooks, counted in the group's calls: one that fails; one whose hop is back only after
 * @p deadline (late once; with no deadline nothing is late); one from which on the hop is never
 * back: each call waits until @p deadline and is late, until GF_SUPPRESS_GPU_HOP_WAIT_NS after that
 * call's start: hung (0: waited for until then), as the GPU suppressor answers. */
static int group_hook(struct gpu_group *g, uint64_t deadline)
{
	uint64_t n = g->calls++;
	if (g->fail_after >= 0 && n == (uint64_t)g->fail_after)
		return GF_E_CUDA;
	int late = deadline && g->late_after >= 0 && n == (uint64_t)g->late_after;
	int hung = g->hang_after >= 0 && n >= (uint64_t)g->hang_after;
	if (!late && !hung)
		return 0;
	if (hung && !g->hang_since)
		g->hang_since = gf_now_ns();
	uint64_t limit = hung ? g->hang_since + GF_SUPPRESS_GPU_HOP_WAIT_NS : UINT64_MAX;
	gf_sleep_until_ns(deadline && deadline < limit ? deadline : limit);
	return hung && gf_now_ns() >= limit ? GF_E_TIMEOUT : GF_SUPPRESS_GPU_LATE;
}

/* Part @p pt's channels of a piece through its GPU suppressor, its answer in pt->err. A run of the
 * interleave is read and written where it is (gf_suppress_gpu_process_rows): no gather, no
 * scatter, half the host's copies. */
static void part_run(const struct gpu_group *g, struct gpu_part *pt, float *buf, uint32_t channels,
		     uint32_t frames, uint64_t deadline)
{
	if (pt->in_place) {
		pt->err = gf_suppress_gpu_process_rows(pt->gpu, buf + g->chan[pt->first], channels, frames,
						       deadline);
		return;
	}
	part_copy(g, pt, buf, channels, frames, 1);
	pt->err = gf_suppress_gpu_process_by(pt->gpu, pt->buf, frames, deadline);
	if (pt->err >= 0) /* late: the part's frames after the hop are silence, as the GPU answered */
		part_copy(g, pt, buf, channels, frames, 0);
}

/* A piece over the bank's pool, part k of the group on thread k (gf_suppress_pool_fn). */
struct parts_job {
	struct gpu_group *g;
	float *buf;
	uint32_t channels, frames;
	uint64_t deadline;
};

static void parts_job_run(void *arg, uint32_t k, uint32_t threads)
{
	(void)threads;
	struct parts_job *j = arg;
	if (k < j->g->parts)
		part_run(j->g, &j->g->part[k], j->buf, j->channels, j->frames, j->deadline);
}

/* The parts' answers as one: the first failure, else late if any part was, else 0. */
static int parts_answer(const struct gpu_group *g)
{
	int late = 0;
	for (uint32_t k = 0; k < g->parts; k++) {
		if (g->part[k].err < 0)
			return g->part[k].err;
		late |= g->part[k].err == GF_SUPPRESS_GPU_LATE;
	}
	return late ? GF_SUPPRESS_GPU_LATE : 0;
}

/* The group's piece through its suppressors: 0, GF_SUPPRESS_GPU_LATE (channels of a late part are
 * silence: the GPU suppressor's own answer, or the stand-in's output dropped), or the error that
 * ends its run. */
static int group_run(struct gf_suppress_bank *b, float *buf, uint32_t frames, uint64_t deadline)
{
	struct gpu_group *g = b->g;
	struct gpu_part *pt = &g->part[0];
	int err = 0;
	if (g->parts > 1) {
		struct parts_job j = {g, buf, b->channels, frames, deadline};
		gf_suppress_pool_run(b->pool, parts_job_run, &j);
		err = parts_answer(g);
		return err ? err : group_hook(g, deadline);
	}
	part_copy(g, pt, buf, b->channels, frames, 1);
	if (g->fake)
		gf_suppress_process(g->fake, pt->buf, frames);
	else
		err = gf_suppress_gpu_process_by(pt->gpu, pt->buf, frames, deadline);
	if (!err)
		err = group_hook(g, deadline);
	if (err == GF_SUPPRESS_GPU_LATE && g->fake)
		memset(pt->buf, 0, (size_t)frames * pt->n * sizeof(float));
	if (err >= 0)
		part_copy(g, pt, buf, b->channels, frames, 0);
	return err;
}

static void mute_group(struct gpu_group *g, float *buf, uint32_t channels, uint32_t frames)
{
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t k = 0; k < g->n; k++)
			buf[(size_t)i * channels + g->chan[k]] = 0.0f;
}

/* One piece: the group on the GPU (late: its channels muted, *@p late set; or, after it failed or
 * hung, its standby suppressors on this very input, the piece muted), the other channels on the
 * CPU, the rest delayed. */
static int process_piece(struct gf_suppress_bank *b, float *piece, uint32_t n, uint64_t deadline, int *late)
{
	/* acquire: a return's reset and probe of the group, on the control thread, happened before */
	int err = 0, on_gpu = b->g && atomic_load_explicit(&b->on_gpu, memory_order_acquire);
	if (on_gpu && (err = group_run(b, piece, n, deadline)) == GF_SUPPRESS_GPU_LATE) {
		*late = 1; /* muted, counted by the caller, still on the GPU */
		err = 0;
	}
	if (on_gpu && err) {
		/* The standby starts clean, as at its first switch: a state left from before a return
		 * would replay its stale overlap (gf_suppress_reset: memsets, RT-safe). */
		for (uint32_t k = 0; k < b->g->n; k++)
			gf_suppress_reset(b->sup[b->g->chan[k]]);
		atomic_store(&b->on_gpu, 0);
		atomic_fetch_add(&b->gpu_failures, 1);
		on_gpu = 0;
	}
	run_cpu(b, piece, n, on_gpu);
	if (err)
		mute_group(b->g, piece, b->channels, n);
	if (b->delay)
		delay_rest(b, piece, n);
	return err;
}

static int suppress_by(struct gf_suppress_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns)
{
	apply_floors(b);
	if (b->channels == 1) { /* mono: in place, no copies (never on the GPU: below its minimum) */
		gf_suppress_process(b->sup[0], buf, frames);
		return 0;
	}
	if (!b->g) { /* the CPU's alone: one hand-off to the pool a call, not one a piece */
		run_cpu(b, buf, frames, 0);
		if (b->delay)
			delay_rest(b, buf, frames);
		return 0;
	}
	uint64_t deadline = deadline_ns;
	if (!deadline && b->g->wait_ns)
		deadline = gf_now_ns() + b->g->wait_ns;
	int failed = 0, late = 0;
	for (uint32_t done = 0; done < frames;) {
		uint32_t n = frames - done < SCRATCH_FRAMES ? frames - done : SCRATCH_FRAMES;
		int err = process_piece(b, buf + (size_t)done * b->channels, n, deadline, &late);
		failed = failed ? failed : err;
		done += n;
	}
	if (late)
		atomic_fetch_add(&b->gpu_late, 1);
	return failed;
}

int gf_suppress_bank_process_by(struct gf_suppress_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns)
{
	int r = b->active ? suppress_by(b, buf, frames, deadline_ns) : 0;
	if (b->neural) /* the same deadline: a stream's one for its block */
		gf_neural_bank_process_by(b->neural, buf, frames, deadline_ns);
	return r;
}

int gf_suppress_bank_process(struct gf_suppress_bank *b, float *buf, uint32_t frames)
{
	return gf_suppress_bank_process_by(b, buf, frames, 0);
}

int gf_suppress_bank_gap_by(struct gf_suppress_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns)
{
	/* NaN is a suppressor's missing input (suppress.h); the delayed channels keep the silence */
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < b->channels; c++)
			if (b->sup[c])
				buf[(size_t)i * b->channels + c] = NAN;
	return gf_suppress_bank_process_by(b, buf, frames, deadline_ns);
}

/* Every part's GPU suppressor back to its state at new() (none with the stand-in): 0, or the first
 * failure, its suppressor in *@p failed where given. */
static int parts_reset(struct gpu_group *g, struct gf_suppress_gpu **failed)
{
	for (uint32_t k = 0; !g->fake && k < g->parts; k++) {
		int err = gf_suppress_gpu_reset(g->part[k].gpu);
		if (err) {
			if (failed)
				*failed = g->part[k].gpu;
			return err;
		}
	}
	return 0;
}

void gf_suppress_bank_set_hum(struct gf_suppress_bank *b, const struct gf_suppress_hum *h)
{
	for (uint32_t c = 0; c < b->channels; c++)
		if (b->sup[c])
			gf_suppress_set_hum(b->sup[c], h);
	for (uint32_t k = 0; b->g && !b->g->fake && k < b->g->parts; k++)
		gf_suppress_gpu_set_hum(b->g->part[k].gpu, h);
	if (b->g && b->g->fake)
		gf_suppress_set_hum(b->g->fake, h);
}

void gf_suppress_bank_reset(struct gf_suppress_bank *b)
{
	apply_floors(b); /* what was set while no stream ran: the reset below starts there */
	for (uint32_t c = 0; c < b->channels; c++)
		if (b->sup[c])
			gf_suppress_reset(b->sup[c]);
	if (b->delay)
		memset(b->delay, 0, (size_t)b->latency * b->channels * sizeof(float));
	b->delay_pos = 0;
	if (b->neural)
		gf_neural_bank_reset(b->neural);
	if (!b->g)
		return;
	gf_suppress_return_reset(&b->ret);
	/* A new stream tries the GPU again: back to it only if its state could be reset. */
	struct gf_suppress_gpu *failed = NULL;
	int err = parts_reset(b->g, &failed);
	if (b->g->fake)
		gf_suppress_reset(b->g->fake);
	if (err)
		gf_info("suppressor: %u channels stay on the CPU: the GPU's reset failed (%s)", b->g->n,
			gf_suppress_gpu_error(failed));
	atomic_store(&b->on_gpu, !err);
}

/* ---- the return to the GPU (control thread) ---------------------------- */

/* One probe call of silence through every part (one after another: the control thread), each
 * back by @p by: 0, or the first part's failure or lateness. */
static int parts_probe(struct gpu_group *g, uint64_t by)
{
	for (uint32_t k = 0; k < g->parts; k++) {
		struct gpu_part *pt = &g->part[k];
		memset(pt->buf, 0, (size_t)SCRATCH_FRAMES * pt->n * sizeof(float));
		int err = 0;
		if (g->fake)
			gf_suppress_process(g->fake, pt->buf, SCRATCH_FRAMES);
		else
			err = gf_suppress_gpu_process_by(pt->gpu, pt->buf, SCRATCH_FRAMES, by);
		if (err)
			return err;
	}
	return 0;
}

/* The group's (@p arg) suppressors from a clean state, answering PROBE_CALLS calls of silence each
 * within GF_SUPPRESS_PROBE_WAIT_NS, then clean again: 0, or why not (a hop still hung: its reset
 * times out). A gf_suppress_probe_fn. */
static int group_probe(void *arg)
{
	struct gpu_group *g = arg;
	int err = parts_reset(g, NULL);
	for (int i = 0; !err && i < PROBE_CALLS; i++) {
		uint64_t by = gf_now_ns() + GF_SUPPRESS_PROBE_WAIT_NS;
		err = parts_probe(g, by);
		err = err ? err : group_hook(g, by);
	}
	if (!err)
		err = parts_reset(g, NULL);
	if (g->fake)
		gf_suppress_reset(g->fake);
	return err;
}

void gf_suppress_bank_try_return(struct gf_suppress_bank *b)
{
	if (b)
		gf_neural_bank_try_return(b->neural); /* the neural stage's GPU, by the same policy */
	if (!b || !b->g || atomic_load_explicit(&b->on_gpu, memory_order_acquire))
		return; /* the worker owns the group while it runs: nothing here touches it then */
	int err = 0;
	if (gf_suppress_return_try(&b->ret, group_probe, b->g, &err) != GF_SUPPRESS_RETURN_PROBED)
		return; /* the first look since the switch (the first wait starts), or not yet */
	if (err) {
		gf_info("suppressor: %u channels stay on the CPU: the GPU is not healthy yet (%s); next try "
			"in %.1f s",
			b->g->n, err == GF_SUPPRESS_GPU_LATE ? "a probe was late" : gf_strerror(err),
			1e-9 * (double)b->ret.step_ns);
		return;
	}
	atomic_fetch_add(&b->gpu_returns, 1);
	atomic_store_explicit(&b->on_gpu, 1, memory_order_release); /* the worker's next piece */
	gf_info("suppressor: %u channels back on the GPU", b->g->n);
}
