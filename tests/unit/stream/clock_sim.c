/* Two device clocks in virtual time around the real callbacks (clock_sim.h).
 *
 * Events in time order: capture callbacks every n_cap frames of the 48 kHz
 * clock, playback callbacks every n_play frames of the other clock, each
 * late by a random jitter (never earlier than the one before it), and the
 * worker, which here is the test: it moves every whole block from the input
 * ring to the output ring as soon as the capture callback published it, as
 * the real worker does (dropping positions playback has passed), except
 * while it stalls. A stall lasts the latency plus a period: the output ring
 * runs dry whatever its fill was, so each one is an underrun.
 *
 * Measured on the output: channels 0-1 are a 0.125 Hz quadrature pair (the
 * capture position modulo 8 s), channels 2-3 a 48 Hz pair (modulo 1000
 * frames, finely): together the fractional capture position P_j that output
 * frame j plays. Frame j is played at j / fs_p, when the capture clock is at
 * fs_c j / fs_p: the delay is the difference. In each 10 ms window the
 * played ratio (P_last - P_first) / (frames) against fs_c / fs_p is the pitch
 * error; a window with silence, a resampler transient or a jump in P is a
 * glitch, counted apart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock_sim.h"
#include "engine.h"
#include "error.h"
#include "live_internal.h"
#include "testutil.h"

#define FS 48000.0
#define CH 4u
#define F_COARSE 0.125
#define F_FINE 48.0
#define WIN 480u	   /* frames per analysis window: 10 ms */
#define PLAY_PHASE 0.3e-3  /* playback callbacks lag the capture clock's period grid */
#define SPIKE_ONE_IN 200u  /* how often a callback comes spike_s later still */
#define TAIL_S 15.0	   /* the played ratio is measured over the last seconds */
#define IN_RING (1u << 17) /* the input ring, larger than gf_live's: a stall outlasts its half second */

struct win {
	uint64_t j0;
	double p0, p_prev, p_last;
	uint32_t n;
	int glitch;
};

struct sim {
	const struct clock_sim_cfg *cfg;
	struct clock_sim_result *res;
	struct gf_live *l;
	double fs_p, rho; /* playback rate; capture frames per playback frame */
	double stall_len;
	uint64_t rng, j; /* output frames so far */
	float *in, *out, *tmp;
	struct win w;
	double tail_p, tail_j, tail_p2, tail_j2; /* the played ratio over the last seconds */
	int have_tail;
	int lost_cap, lost_play; /* the one loss of each kind happened */
};

static double u01(struct sim *s)
{
	s->rng += 0x9e3779b97f4a7c15ull; /* splitmix64 */
	uint64_t z = s->rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double late(struct sim *s)
{
	double d = s->cfg->jitter_s * u01(s);
	if (u01(s) * SPIKE_ONE_IN < 1.0)
		d += s->cfg->spike_s;
	return d;
}

static void make_input(float *x, uint64_t p0, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		double p = (double)(p0 + i);
		double a = 2 * M_PI * fmod(F_COARSE * p / FS, 1.0), b = 2 * M_PI * fmod(F_FINE * p / FS, 1.0);
		float *f = x + (size_t)i * CH;
		f[0] = (float)cos(a);
		f[1] = (float)sin(a);
		f[2] = (float)cos(b);
		f[3] = (float)sin(b);
	}
}

/* The capture position frame @p f plays, near @p guess; NAN for silence or a transient. */
static double decode(const float *f, double guess)
{
	double r1 = hypot(f[0], f[1]), r2 = hypot(f[2], f[3]);
	if (fabs(r1 - 1) > 0.01 || fabs(r2 - 1) > 0.01)
		return NAN;
	const double per1 = FS / F_COARSE, per2 = FS / F_FINE;
	double c = atan2(f[1], f[0]) / (2 * M_PI) * per1;
	c += per1 * round((guess - c) / per1);
	double fine = atan2(f[3], f[2]) / (2 * M_PI) * per2, d = fine - fmod(c, per2);
	return c + d - per2 * round(d / per2);
}

static double ev_len(const struct sim *s, int k)
{
	return s->cfg->ev[k].kind == SIM_STALL ? s->stall_len : s->cfg->ev[k].len;
}

/* The end of the latest event that ended by @p t, or -1. */
static double event_end_before(const struct sim *s, double t)
{
	double end = -1;
	for (int k = 0; k < s->cfg->events; k++)
		if (s->cfg->ev[k].at + ev_len(s, k) <= t)
			end = s->cfg->ev[k].at + ev_len(s, k);
	return end;
}

/* The end of the event of @p kind under way at @p t, or -1. */
static double event_end_at(const struct sim *s, enum clock_sim_kind kind, double t)
{
	for (int k = 0; k < s->cfg->events; k++)
		if (s->cfg->ev[k].kind == kind && t >= s->cfg->ev[k].at &&
		    t < s->cfg->ev[k].at + ev_len(s, k))
			return s->cfg->ev[k].at + ev_len(s, k);
	return -1;
}

/* Within an event or the re-centring after it (which waits 0.25 s). */
static int near_event(const struct sim *s, double t)
{
	for (int k = 0; k < s->cfg->events; k++)
		if (t >= s->cfg->ev[k].at - 0.02 && t < s->cfg->ev[k].at + ev_len(s, k) + 0.6)
			return 1;
	return 0;
}

static void note_lock(struct sim *s, double t, double dev)
{
	s->res->lock_dev = fmax(s->res->lock_dev, dev);
	if (dev >= 1e-3)
		s->res->lock_ms = t * 1e3 + 10;
}

static void note_tail(struct sim *s)
{
	if (!s->have_tail) {
		s->tail_p = s->w.p0;
		s->tail_j = (double)s->w.j0;
		s->have_tail = 1;
	}
	s->tail_p2 = s->w.p_last;
	s->tail_j2 = (double)(s->w.j0 + WIN - 1);
}

static void note_delay(struct sim *s, double t)
{
	struct clock_sim_result *r = s->res;
	double delay = FS * (double)s->w.j0 / s->fs_p - s->w.p0;
	if (r->windows - r->glitches == 1)
		r->delay_settled = delay;
	if (near_event(s, t))
		return;
	r->delay_lo = fmin(r->delay_lo, delay - r->delay_settled);
	r->delay_hi = fmax(r->delay_hi, delay - r->delay_settled);
}

/* A finished window: fold it into the results. */
static void close_window(struct sim *s)
{
	struct clock_sim_result *r = s->res;
	double t = (double)s->w.j0 / s->fs_p;
	double dev = fabs((s->w.p_last - s->w.p0) / (WIN - 1) / s->rho - 1);
	if (s->w.n < WIN || (t < s->cfg->lock_s && s->w.glitch))
		return;
	if (t < s->cfg->lock_s) {
		note_lock(s, t, dev);
		return;
	}
	r->windows++;
	if (s->w.glitch) {
		r->glitches++;
		return;
	}
	note_delay(s, t);
	r->any_dev = fmax(r->any_dev, dev);
	double end = event_end_before(s, t);
	if (s->cfg->events == 0 || t < s->cfg->ev[0].at)
		r->steady_dev = fmax(r->steady_dev, dev);
	if (end >= 0) {
		r->after_dev = fmax(r->after_dev, dev);
		if (dev >= 1e-3)
			r->after_settle_ms = fmax(r->after_settle_ms, (t - end) * 1e3 + 10);
	}
	if (t >= s->cfg->seconds - TAIL_S)
		note_tail(s);
}

static void analyse(struct sim *s, const float *y, uint32_t n)
{
	uint32_t lat = atomic_load(&s->l->latency);
	for (uint32_t i = 0; i < n; i++, s->j++) {
		if (s->w.n == WIN) {
			close_window(s);
			memset(&s->w, 0, sizeof(s->w));
		}
		double p = decode(y + (size_t)i * CH, s->rho * (double)s->j - lat);
		if (s->w.n == 0) {
			s->w.j0 = s->j;
			s->w.p0 = p;
		} else if (!(fabs(p - s->w.p_prev - s->rho) < 0.2)) {
			s->w.glitch = 1; /* a jump (skip, insert) or NAN */
		}
		if (isnan(p))
			s->w.glitch = 1;
		s->w.p_prev = s->w.p_last = p;
		s->w.n++;
	}
}

/* The worker: every whole block from the input ring to the output ring. */
static void drain(struct sim *s)
{
	struct gf_live *l = s->l;
	uint32_t b = s->cfg->block;
	while (gf_ring_read_space(l->in_ring) >= b) {
		gf_ring_read(l->in_ring, s->tmp, b);
		uint32_t skip = gf_ring_write_lag(l->out_ring);
		skip = skip < b ? skip : b;
		if (skip)
			gf_ring_write_advance(l->out_ring, skip);
		uint32_t k = gf_ring_write(l->out_ring, s->tmp + (size_t)skip * CH, b - skip);
		if (k < b - skip)
			atomic_fetch_add(&l->out_overflow, b - skip - k);
	}
}

static struct gf_live *sim_live(const struct clock_sim_cfg *cfg, struct gf_engine *e)
{
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, (uint32_t)FS, CH, cfg->block, 1, NULL, e, &eb), &eb);
	l->duplex = 0; /* two streams, two clocks, as gf_live_new decides for two devices */
	l->ti_clock = 1;
	CHECK_OK(gf_live_clock_new(&l->clock, CH, (uint32_t)FS));
	gf_ring_free(l->in_ring);
	CHECK_OK(gf_ring_new(&l->in_ring, IN_RING, CH));
	return l;
}

/* Whole periods of the loss of @p kind, at least one. */
static uint64_t lost_periods(const struct sim *s, enum clock_sim_kind kind, uint32_t n, double fs)
{
	for (int k = 0; k < s->cfg->events; k++)
		if (s->cfg->ev[k].kind == kind) {
			uint64_t m = (uint64_t)llround(s->cfg->ev[k].len * fs / n);
			return m ? m : 1;
		}
	return 0;
}

/* A capture callback; or, once, a lost stretch: the period grid moves on
 * (its frames never come: the capture count goes on from where it was). */
static void capture_event(struct sim *s, uint64_t *kc, double tc, double *release)
{
	const struct clock_sim_cfg *c = s->cfg;
	double lost = event_end_at(s, SIM_LOSE_CAP, tc);
	if (lost >= 0 && !s->lost_cap) {
		*kc += lost_periods(s, SIM_LOSE_CAP, c->n_cap, FS);
		s->lost_cap = 1;
		return;
	}
	PaStreamCallbackTimeInfo ti = {.currentTime = tc};
	make_input(s->in, *kc * c->n_cap, c->n_cap);
	gf_live_capture_cb(s->in, NULL, c->n_cap, &ti, 0, s->l);
	double stall = event_end_at(s, SIM_STALL, tc);
	if (stall < 0)
		drain(s);
	else
		*release = stall;
	(*kc)++;
}

/* A playback callback; a lost stretch is played as silence by the device,
 * not asked of gpufir. */
static void playback_event(struct sim *s, uint64_t *kp, double tp)
{
	const struct clock_sim_cfg *c = s->cfg;
	double lost = event_end_at(s, SIM_LOSE_PLAY, tp);
	if (lost >= 0 && !s->lost_play) {
		uint64_t m = lost_periods(s, SIM_LOSE_PLAY, c->n_play, s->fs_p);
		memset(s->out, 0, (size_t)c->n_play * CH * sizeof(float));
		for (uint64_t i = 0; i < m; i++)
			analyse(s, s->out, c->n_play);
		*kp += m;
		s->lost_play = 1;
		return;
	}
	PaStreamCallbackTimeInfo ti = {.currentTime = tp};
	gf_live_playback_cb(NULL, s->out, c->n_play, &ti, 0, s->l);
	analyse(s, s->out, c->n_play);
	(*kp)++;
}

static void run_events(struct sim *s)
{
	const struct clock_sim_cfg *c = s->cfg;
	uint64_t kc = 0, kp = 0;
	double tc = c->n_cap / FS + late(s), tp = PLAY_PHASE + late(s), release = -1;
	while (tp < c->seconds) {
		if (release >= 0 && release <= tc && release <= tp) {
			drain(s);
			release = -1;
		} else if (tc <= tp) {
			capture_event(s, &kc, tc, &release);
			tc = fmax(tc, (double)(kc + 1) * c->n_cap / FS + late(s));
		} else {
			playback_event(s, &kp, tp);
			tp = fmax(tp, (double)kp * c->n_play / s->fs_p + PLAY_PHASE + late(s));
		}
	}
}

void clock_sim_run(const struct clock_sim_cfg *cfg, struct clock_sim_result *res)
{
	struct sim s = {.cfg = cfg, .res = res, .rng = cfg->seed};
	memset(res, 0, sizeof(*res));
	res->delay_lo = 1e9;
	res->delay_hi = -1e9;
	s.fs_p = FS * (1.0 + cfg->ppm * 1e-6);
	s.rho = FS / s.fs_p;
	/* Slack for the callbacks' lateness, as the auto slack would learn it. */
	uint32_t slack = 1 + (uint32_t)ceil((cfg->jitter_s + cfg->spike_s) * FS / cfg->n_play);
	res->latency = gf_live_latency_for(cfg->block, cfg->n_cap, cfg->n_play, 0, slack);
	s.stall_len = (double)(res->latency + cfg->n_play) / FS + 0.01;
	struct gf_engine *e = gf_test_passthrough_engine(CH, cfg->block, 1);
	s.l = sim_live(cfg, e);
	s.l->slack = slack;
	atomic_store(&s.l->slack_now, slack);
	uint32_t nmax = cfg->n_cap > cfg->n_play ? cfg->n_cap : cfg->n_play;
	s.in = calloc((size_t)nmax * CH, sizeof(float));
	s.out = calloc((size_t)nmax * CH, sizeof(float));
	s.tmp = calloc((size_t)cfg->block * CH, sizeof(float));
	CHECK(s.in && s.out && s.tmp);
	run_events(&s);
	res->latency = atomic_load(&s.l->latency); /* as synced: at most half the ring */
	res->underflow = atomic_load(&s.l->out_underflow);
	res->overflow = atomic_load(&s.l->out_overflow);
	res->skipped = atomic_load(&s.l->clock_skipped);
	res->inserted = atomic_load(&s.l->clock_inserted);
	res->stall_s = s.stall_len;
	res->ratio_ppm = atomic_load(&s.l->ratio_ppb) * 1e-3;
	if (s.have_tail && s.tail_p2 > s.tail_p)
		res->pitch_ppm = ((s.tail_j2 - s.tail_j) / (s.tail_p2 - s.tail_p) - 1) * 1e6;
	gf_live_free(s.l);
	gf_engine_free(e);
	free(s.in);
	free(s.out);
	free(s.tmp);
}
