/*
 * The neural stage over interleaved audio (neural_bank.h). Framing: the
 * active channels' input is gathered, planar, into a hop buffer; when it is
 * full it becomes the job of the helpers (double-buffered: the next hop
 * fills while one is in flight) and the output of that job is played out
 * over the next hop. So the stage lags by one hop plus the model's own
 * latency, and the dry signal, delayed by the same, lines up with the model's
 * output for the bypass ramp and for the channels without the stage. On the
 * GPU (neural_switch.c) the gathered hop goes to the GPU's batch instead of
 * the helpers, which then hold its standby.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "neural_bank_impl.h"

/* Stages freed while a hop was hung: its helper may still write into them, so they are never freed,
 * and stay reachable here (leak checkers). Pushed by any control thread, never popped. */
static struct gf_neural_bank *_Atomic g_kept;

static void keep_for_good(struct gf_neural_bank *b)
{
	b->kept_next = atomic_load(&g_kept);
	while (!atomic_compare_exchange_weak(&g_kept, &b->kept_next, b))
		;
}

/* Part @p part of a hop: one contiguous run of the active channels. A standby taking over from the
 * GPU (job_prime) restarts clean and runs the last hops gathered, the newest the hop due, so that
 * its output at once is the model's on audio, not its start-up's silence. */
static void hop_part(void *arg, uint32_t part, uint32_t parts)
{
	struct gf_neural_bank *b = arg;
	uint32_t first = (uint32_t)((uint64_t)b->active * part / parts);
	uint32_t end = (uint32_t)((uint64_t)b->active * (part + 1) / parts);
	if (end == first)
		return;
	if (b->job_prime && b->ops->reset)
		b->ops->reset(b->inst, first, end - first);
	if (b->atten_new)
		b->ops->set_atten_lim(b->inst, first, end - first, b->atten_job);
	size_t at = (size_t)first * GF_NEURAL_HOP, hop = (size_t)b->active * GF_NEURAL_HOP;
	for (uint32_t j = 0; b->job_prime && j < b->prime; j++) /* oldest first */
		b->ops->process(b->inst, first, end - first,
				b->hist + (b->job_hist + j) % b->prime * hop + at, b->job_out + at);
	if (!b->job_prime)
		b->ops->process(b->inst, first, end - first, b->job_in + at, b->job_out + at);
}

void gf_neural_bank_free(struct gf_neural_bank *b)
{
	if (!b)
		return;
	/* A hop still out after GF_NEURAL_HANG_NS more is hung (as in reset): its helper owns the
	 * instance and the job's buffers for as long as it runs, so the whole stage is kept. */
	if (b->pool && !gf_neural_pool_wait(b->pool, gf_now_ns() + GF_NEURAL_HANG_NS)) {
		keep_for_good(b);
		return;
	}
	gf_neural_pool_free(b->pool);
	gf_neural_switch_free(b);
	if (b->ops)
		b->ops->free(b->inst);
	free(b->chan);
	free(b->fill);
	free(b->job_in);
	free(b->job_out);
	free(b->play);
	free(b->dry);
	free(b);
}

static int check_params(uint32_t rate, const struct gf_neural_params *p, struct gf_errbuf *eb)
{
	if (rate != GF_NEURAL_RATE) {
		gf_errbuf_set(eb, "DeepFilterNet3 runs at %u Hz only, not %u Hz: set sample_rate = %u",
			      GF_NEURAL_RATE, rate, GF_NEURAL_RATE);
		return GF_E_INVAL;
	}
	if (!(p->atten_lim_db > 0.0f && p->atten_lim_db <= GF_NEURAL_MAX_ATTEN_LIM_DB) ||
	    !(p->post_filter_beta >= 0.0f && p->post_filter_beta <= GF_NEURAL_MAX_POST_FILTER_BETA)) {
		gf_errbuf_set(eb,
			      "atten_lim_db must be in (0, %g] and post_filter_beta in [0, %g] (got %g, %g)",
			      GF_NEURAL_MAX_ATTEN_LIM_DB, GF_NEURAL_MAX_POST_FILTER_BETA, p->atten_lim_db,
			      p->post_filter_beta);
		return GF_E_INVAL;
	}
	return 0;
}

static int alloc_buffers(struct gf_neural_bank *b, const uint8_t *active)
{
	size_t hop = (size_t)b->active * GF_NEURAL_HOP * sizeof(float);
	if (!(b->chan = malloc(b->active * sizeof(*b->chan))) || !(b->fill = calloc(1, hop)) ||
	    !(b->job_in = calloc(1, hop)) || !(b->job_out = calloc(1, hop)) || !(b->play = calloc(1, hop)) ||
	    !(b->dry = calloc((size_t)b->latency * b->channels, sizeof(float))))
		return GF_E_NOMEM;
	for (uint32_t c = 0, k = 0; c < b->channels; c++)
		if (active[c])
			b->chan[k++] = c;
	return 0;
}

static uint32_t helper_count(const struct gf_neural_bank_opts *o, uint32_t active)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = o && o->threads ? o->threads : (cpus > 0 ? (uint32_t)cpus : 1u);
	return n < active ? n : active;
}

int gf_neural_bank_new(const uint8_t *active, uint32_t channels, uint32_t rate,
		       const struct gf_neural_params *p, const struct gf_neural_bank_opts *o,
		       struct gf_neural_bank **out, struct gf_errbuf *eb)
{
	*out = NULL;
	int r = check_params(rate, p, eb);
	if (r)
		return r;
	struct gf_neural_bank *b = calloc(1, sizeof(*b));
	if (!b)
		return GF_E_NOMEM;
	b->channels = channels;
	for (uint32_t c = 0; c < channels; c++)
		b->active += active[c] != 0;
	if (!b->active) {
		gf_errbuf_set(eb, "no channel has the neural stage");
		r = GF_E_INVAL;
		goto fail;
	}
	b->ops = o && o->ops ? o->ops : &gf_neural_ref_ops;
	if ((r = b->ops->create(p, b->active, &b->inst, eb))) {
		b->ops = NULL;
		goto fail;
	}
	b->latency = GF_NEURAL_HOP + b->ops->latency(b->inst);
	if ((r = alloc_buffers(b, active)) ||
	    (r = gf_neural_pool_new(helper_count(o, b->active), hop_part, b, &b->pool, eb)) ||
	    (o && o->gpu && (r = gf_neural_switch_new(b, p, o))))
		goto fail;
	atomic_store(&b->bypass, o && o->bypass);
	b->gain = o && o->bypass ? 0.0f : 1.0f;
	b->gain_step = 1.0f / GF_NEURAL_RAMP_FRAMES;
	gf_neural_atten_ask(b, p->atten_lim_db);
	b->atten_job = b->gpu_atten = p->atten_lim_db;
	*out = b;
	return 0;
fail:
	gf_neural_bank_free(b);
	return r;
}

uint32_t gf_neural_bank_latency(const struct gf_neural_bank *b)
{
	return b ? b->latency : 0;
}

uint32_t gf_neural_bank_active(const struct gf_neural_bank *b)
{
	return b ? b->active : 0;
}

uint32_t gf_neural_bank_threads(const struct gf_neural_bank *b)
{
	return b ? gf_neural_pool_parts(b->pool) : 0;
}

const char *gf_neural_bank_backend(const struct gf_neural_bank *b)
{
	return !b ? "" : gf_neural_bank_on_gpu(b) ? b->gops->name : b->ops->name;
}

int gf_neural_bank_on_gpu(const struct gf_neural_bank *b)
{
	return b && b->gops && atomic_load(&b->on_gpu);
}

uint64_t gf_neural_bank_gpu_failures(const struct gf_neural_bank *b)
{
	return b ? atomic_load(&b->gpu_failures) : 0;
}

uint64_t gf_neural_bank_gpu_returns(const struct gf_neural_bank *b)
{
	return b ? atomic_load(&b->gpu_returns) : 0;
}

uint64_t gf_neural_bank_late(const struct gf_neural_bank *b)
{
	return b ? atomic_load(&b->late) : 0;
}

uint64_t gf_neural_bank_dropped(const struct gf_neural_bank *b)
{
	return b ? atomic_load(&b->dropped) : 0;
}

uint64_t gf_neural_bank_failures(const struct gf_neural_bank *b)
{
	return b ? atomic_load(&b->failures) : 0;
}

void gf_neural_bank_set_bypass(struct gf_neural_bank *b, int on)
{
	atomic_store(&b->bypass, on != 0);
}

int gf_neural_bank_set_atten_lim(struct gf_neural_bank *b, double db)
{
	if (!(db > 0.0 && db <= GF_NEURAL_MAX_ATTEN_LIM_DB))
		return GF_E_INVAL;
	gf_neural_atten_ask(b, (float)db);
	return 0;
}

/* ---- the audio thread ---------------------------------------------------- */

void gf_neural_bank_collected(struct gf_neural_bank *b)
{
	float *t = b->play;
	b->play = b->job_out;
	b->job_out = t;
	b->have_play = 1;
}

/* The gathered hop becomes the helpers' job, with the attenuation limit asked for since the last
 * (a standby restarting takes it whatever it was: the GPU had the changes meanwhile). */
static void submit(struct gf_neural_bank *b)
{
	float *t = b->job_in;
	b->job_in = b->fill;
	b->fill = t;
	float lim = gf_neural_atten_asked(b);
	b->job_prime = b->prime_due;
	b->job_hist = b->hist_next;
	b->prime_due = 0;
	b->atten_new = lim != b->atten_job || b->job_prime;
	b->atten_job = lim;
	b->submitted_ns = gf_now_ns();
	gf_neural_pool_start(b->pool);
}

/* The gathered hop into the history a standby restarts on (newest at hist_next - 1). */
static void keep_hop(struct gf_neural_bank *b)
{
	size_t hop = (size_t)b->active * GF_NEURAL_HOP;
	memcpy(b->hist + (size_t)b->hist_next * hop, b->fill, hop * sizeof(float));
	b->hist_next = b->hist_next + 1 == b->prime ? 0 : b->hist_next + 1;
}

/* A full hop: hand it over (to the GPU, else the helpers) and wait for it until the deadline (late:
 * collected by a later call). */
static void hop_due(struct gf_neural_bank *b, uint64_t deadline)
{
	b->have_play = 0;
	if (b->hist && !(b->job_prime && gf_neural_pool_busy(b->pool))) /* not under a restart's reads */
		keep_hop(b);
	if (atomic_load(&b->given_up))
		return; /* its hung hop is never waited for again */
	if (b->gops && gf_neural_switch_hop(b, deadline))
		return;
	if (gf_neural_pool_busy(b->pool) && !gf_neural_pool_wait(b->pool, deadline)) {
		atomic_fetch_add(&b->dropped, 1); /* the one before is still in flight: this one is lost */
		if (gf_now_ns() - b->submitted_ns >= GF_NEURAL_HANG_NS && !atomic_load(&b->given_up)) {
			atomic_store(&b->given_up, 1);
			atomic_fetch_add(&b->failures, 1);
		}
		return;
	}
	submit(b);
	if (gf_neural_pool_wait(b->pool, deadline))
		gf_neural_bank_collected(b);
}

/* Within a hop, a late hop back: its remaining frames play. */
static void poll_late(struct gf_neural_bank *b)
{
	if (b->have_play || atomic_load(&b->given_up))
		return;
	if (b->gpu_now)
		gf_neural_switch_poll(b);
	else if (gf_neural_pool_busy(b->pool) && gf_neural_pool_wait(b->pool, 1))
		gf_neural_bank_collected(b);
}

/* Frames [0, n) of @p buf, all within one hop: gather, delay, mix. */
static void run_frames(struct gf_neural_bank *b, float *buf, uint32_t n)
{
	uint32_t ch = b->channels;
	float target = atomic_load_explicit(&b->bypass, memory_order_relaxed) || atomic_load(&b->given_up)
			       ? 0.0f
			       : 1.0f;
	for (uint32_t i = 0; i < n; i++) {
		float *x = buf + (size_t)i * ch, *d = b->dry + (size_t)b->dry_pos * ch;
		size_t at = b->pos + i;
		for (uint32_t k = 0; k < b->active; k++) {
			float v = x[b->chan[k]];
			b->fill[(size_t)k * GF_NEURAL_HOP + at] = isfinite(v) ? v : 0.0f;
		}
		for (uint32_t c = 0; c < ch; c++) { /* every channel's dry signal, delayed */
			float v = d[c];
			d[c] = x[c];
			x[c] = v;
		}
		float g = b->gain;
		for (uint32_t k = 0; k < b->active; k++) {
			float wet = b->have_play ? b->play[(size_t)k * GF_NEURAL_HOP + at] : 0.0f;
			float *y = &x[b->chan[k]];
			*y = g == 1.0f ? wet : g * wet + (1.0f - g) * *y;
		}
		b->gain = g < target ? fminf(g + b->gain_step, target) : fmaxf(g - b->gain_step, target);
		b->dry_pos = b->dry_pos + 1 == b->latency ? 0 : b->dry_pos + 1;
	}
}

void gf_neural_bank_process_by(struct gf_neural_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns)
{
	int late = 0;
	for (uint32_t done = 0; done < frames;) {
		poll_late(b);
		uint32_t n = GF_NEURAL_HOP - b->pos < frames - done ? GF_NEURAL_HOP - b->pos : frames - done;
		run_frames(b, buf + (size_t)done * b->channels, n);
		done += n;
		if ((b->pos += n) == GF_NEURAL_HOP) {
			b->pos = 0;
			hop_due(b, deadline_ns);
			late |= !b->have_play && !atomic_load(&b->given_up);
		}
	}
	if (late)
		atomic_fetch_add(&b->late, 1);
}

void gf_neural_bank_reset(struct gf_neural_bank *b)
{
	/* A hop still out after GF_NEURAL_HANG_NS more is hung and may never come back: the stage
	 * stays given up (the helpers touch only the job's buffers, not those reset below) rather
	 * than the control thread waiting for it for good. */
	int back = gf_neural_pool_wait(b->pool, gf_now_ns() + GF_NEURAL_HANG_NS);
	size_t hop = (size_t)b->active * GF_NEURAL_HOP * sizeof(float);
	memset(b->fill, 0, hop);
	memset(b->play, 0, hop);
	memset(b->dry, 0, (size_t)b->latency * b->channels * sizeof(float));
	b->pos = b->dry_pos = 0;
	b->have_play = 0;
	b->gain = atomic_load(&b->bypass) ? 0.0f : 1.0f;
	if (back)
		atomic_store(&b->given_up, 0);
	else if (!atomic_exchange(&b->given_up, 1))
		atomic_fetch_add(&b->failures, 1);
	if (b->gops)
		gf_neural_switch_reset(b, back);
}
