/*
 * The time-varying noise suppressor (suppress.h): streaming STFT with a
 * weighted overlap-add, a minimum-controlled noise estimate and a
 * decision-directed Wiener gain, per channel.
 *
 * Streaming: every channel keeps the last N input frames (in), an overlap-add
 * accumulator (ola) and the hop of finished output (out). A sample written at
 * hop position i is answered with out[i], finished one frame earlier; when a
 * hop fills, each channel's frame is transformed, weighted and added back.
 * The channels move in lockstep, so one position counts for all.
 */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fft_wisdom.h"
#include "memlimit.h"
#include "suppress.h"
#include "suppress_bins.h"
#include "suppress_hum.h"

struct sup_chan {
	float *in;  /* N: the newest N input frames, oldest first */
	float *ola; /* N: overlap-add accumulator; its first hop is finished after a frame */
	float *out; /* hop: the finished output the next hop's samples are answered with */
	struct gf_suppress_bins bins;
};

struct gf_suppress {
	uint32_t channels, rate, n, hop, nb;
	uint32_t pos;  /* frames of the current hop written so far, all channels */
	uint32_t hold; /* frames still to come that hold a missing (non-finite) sample */
	float *win;    /* N: square-root periodic Hann */
	float *time;   /* N: transform input and output */
	fftwf_complex *spec;
	fftwf_plan r2c, c2r;
	struct gf_suppress_consts k;	/* k.g_min: this frame's floor, from floor */
	struct gf_suppress_floor floor; /* the gain's floor, the live depth, ramped */
	float *seed;			/* nb: the noise sample's mean power per bin; NULL: none */
	float *hp;			/* nb: the high-pass table H (suppress.h); NULL: none */
	uint32_t hum_top;		/* the highest hum harmonic removed; 0: none (suppress_hum.h) */
	struct gf_suppress_gain_slot hum_gain; /* per bin: the hum's factor on the floor, 1 elsewhere */
	float *hum_mem;			       /* 3 x nb: the slot's tables */
	struct sup_chan *ch;
	float *mem; /* one block for every channel's arrays */
};

/* Whether @p n has no prime factor above 7 (FFTW and cuFFT are fastest there). */
static int seven_smooth(uint32_t n)
{
	static const uint32_t primes[] = {2, 3, 5, 7};
	for (size_t i = 0; i < sizeof(primes) / sizeof(primes[0]); i++)
		while (n % primes[i] == 0)
			n /= primes[i];
	return n == 1;
}

/* The longest even, 7-smooth frame within GF_SUPPRESS_MAX_FRAME_S: the finest
 * resolution of a voice's harmonics the latency allows. */
static uint32_t frame_for_rate(uint32_t rate)
{
	uint32_t n = (uint32_t)(GF_SUPPRESS_MAX_FRAME_S * rate) & ~1u;
	while (n > 16 && !seven_smooth(n))
		n -= 2;
	return n;
}

static float tc(double hop_s, double tau_s)
{
	return (float)exp(-hop_s / tau_s);
}

static void set_consts(struct gf_suppress_consts *k, uint32_t hop, uint32_t rate, double reduction_db)
{
	double th = (double)hop / rate;
	k->a_s = tc(th, GF_SUPPRESS_TAU_SMOOTH_S);
	k->a_p = tc(th, GF_SUPPRESS_TAU_PRESENCE_S);
	k->a_d = tc(th, GF_SUPPRESS_TAU_NOISE_S);
	k->a_dd = tc(th, GF_SUPPRESS_TAU_DD_S);
	k->g_min = (float)pow(10.0, -reduction_db / 20.0);
	k->start_frames = (uint32_t)ceil(GF_SUPPRESS_START_S / th);
	k->ramp_frames = (uint32_t)ceil(GF_SUPPRESS_RAMP_S / th);
	k->min_window = (uint32_t)ceil(GF_SUPPRESS_MIN_WINDOW_S / th);
}

/* Transform in[] through the window into s->spec. */
static void analyse(struct gf_suppress *s, const float *in)
{
	for (uint32_t i = 0; i < s->n; i++)
		s->time[i] = in[i] * s->win[i];
	fftwf_execute_dft_r2c(s->r2c, s->time, s->spec);
}

/* The mean power per bin of the noise sample, framed as the stream is. */
static void measure_seed(struct gf_suppress *s, const float *noise, uint64_t frames)
{
	float count = 0.0f;
	memset(s->seed, 0, s->nb * sizeof(float));
	for (uint64_t at = 0; at + s->n <= frames; at += s->hop) {
		analyse(s, noise + at);
		count += 1.0f;
		for (uint32_t b = 0; b < s->nb;
		     b++) { /* a running mean: no float sum to overflow or round away */
			float re = s->spec[b][0], im = s->spec[b][1];
			s->seed[b] += (re * re + im * im - s->seed[b]) / count;
		}
	}
}

static int check_params(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate,
			struct gf_errbuf *eb)
{
	if (channels == 0 || rate < 8000 || rate > 768000) {
		gf_errbuf_set(eb,
			      "suppress: %u channels at %u Hz: need at least one channel, 8000..768000 Hz",
			      channels, rate);
		return GF_E_INVAL;
	}
	if (!(p->reduction_db >= 0.0 && p->reduction_db <= GF_SUPPRESS_MAX_REDUCTION_DB)) {
		gf_errbuf_set(eb, "suppress: reduction_db %g is outside 0..%g", p->reduction_db,
			      GF_SUPPRESS_MAX_REDUCTION_DB);
		return GF_E_INVAL;
	}
	uint32_t n = frame_for_rate(rate);
	if (p->highpass_hz != 0.0 && !(p->highpass_hz >= GF_SUPPRESS_MIN_HIGHPASS_HZ &&
				       p->highpass_hz <= GF_SUPPRESS_MAX_HIGHPASS_HZ)) {
		gf_errbuf_set(eb, "suppress: highpass_hz %g is neither 0 (off) nor within %g..%g Hz",
			      p->highpass_hz, GF_SUPPRESS_MIN_HIGHPASS_HZ, GF_SUPPRESS_MAX_HIGHPASS_HZ);
		return GF_E_INVAL;
	}
	if (p->noise && p->noise_frames < 2u * n) {
		gf_errbuf_set(
			eb,
			"suppress: the noise sample has %llu frames; it needs at least %u (two frames of "
			"%.1f ms)",
			(unsigned long long)p->noise_frames, 2u * n, 1000.0 * n / rate);
		return GF_E_INVAL;
	}
	for (uint64_t i = 0; p->noise && i < p->noise_frames; i++)
		if (!isfinite(p->noise[i])) {
			gf_errbuf_set(eb, "suppress: the noise sample has a NaN or Inf at frame %llu",
				      (unsigned long long)i);
			return GF_E_NONFINITE;
		}
	return 0;
}

/* Lay every channel's arrays out in one block (zeroed). */
static int alloc_channels(struct gf_suppress *s)
{
	size_t per = (size_t)s->n * 2 + s->hop + (size_t)s->nb * GF_SUPPRESS_BIN_ARRAYS;
	s->ch = calloc(s->channels, sizeof(*s->ch));
	s->mem = fftwf_malloc(sizeof(float) * (per * s->channels + s->n + 5 * (size_t)s->nb));
	if (!s->ch || !s->mem)
		return GF_E_NOMEM;
	float *m = s->mem;
	s->win = m;
	m += s->n;
	s->seed = m;
	m += s->nb;
	s->hp = m;
	m += s->nb;
	s->hum_mem = m;
	m += 3 * (size_t)s->nb;
	for (uint32_t c = 0; c < s->channels; c++) {
		struct sup_chan *ch = &s->ch[c];
		ch->in = m;
		ch->ola = m + s->n;
		ch->out = m + 2 * s->n;
		gf_suppress_bins_bind(&ch->bins, m + 2 * s->n + s->hop, s->nb);
		m += per;
	}
	return 0;
}

static int make_plans(struct gf_suppress *s, struct gf_errbuf *eb)
{
	s->time = fftwf_malloc(sizeof(float) * s->n);
	s->spec = fftwf_malloc(sizeof(fftwf_complex) * s->nb);
	if (!s->time || !s->spec)
		return GF_E_NOMEM;
	memset(s->time, 0, sizeof(float) * s->n); /* touched here: the audio thread faults no page in */
	memset(s->spec, 0, sizeof(fftwf_complex) * s->nb);
	gf_fftwf_planner_lock();
	gf_fft_wisdom_plan_pair((int)s->n, s->time, s->spec, &s->r2c, &s->c2r);
	gf_fftwf_planner_unlock();
	if (s->r2c && s->c2r)
		return 0;
	gf_errbuf_set(eb, "suppress: FFTW could not plan a %u-point transform", s->n);
	return GF_E_FFT;
}

/* H (suppress.h): 0 at DC, a ramp one bin wide centred on @p hz, 1 above. The windows smooth it
 * over about three bins, which puts the response's -6 dB point near @p hz. */
static void make_highpass(float *hp, uint32_t nb, uint32_t n, uint32_t rate, double hz)
{
	double df = (double)rate / n;
	for (uint32_t b = 0; b < nb; b++) {
		double g = (b * df - hz) / df + 0.5;
		hp[b] = (float)(g < 0.0 ? 0.0 : g > 1.0 ? 1.0 : g);
	}
	hp[0] = 0.0f;
}

int gf_suppress_new(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate,
		    struct gf_suppress **out, struct gf_errbuf *eb)
{
	*out = NULL;
	int err = check_params(p, channels, rate, eb);
	if (err)
		return err;
	struct gf_suppress *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_E_NOMEM;
	s->channels = channels;
	s->rate = rate;
	s->n = frame_for_rate(rate);
	s->hop = s->n / 2;
	s->nb = s->n / 2 + 1;
	set_consts(&s->k, s->hop, rate, p->reduction_db);
	gf_suppress_floor_init(&s->floor, s->k.g_min);
	err = gf_mem_check(gf_mem_fft_plan_bytes(s->n, sizeof(float)), "suppress", eb);
	if (!err)
		err = alloc_channels(s);
	if (!err)
		err = make_plans(s, eb);
	if (err) {
		if (err == GF_E_NOMEM && eb && !eb->msg[0])
			gf_errbuf_set(eb, "suppress: out of memory for %u channels", channels);
		gf_suppress_free(s);
		return err;
	}
	for (uint32_t i = 0; i < s->n; i++) /* periodic Hann's square root: sin(pi i / N) */
		s->win[i] = (float)sin(M_PI * i / s->n);
	if (p->noise)
		measure_seed(s, p->noise, p->noise_frames);
	else
		s->seed = NULL;
	if (p->highpass_hz > 0.0)
		make_highpass(s->hp, s->nb, s->n, rate, p->highpass_hz);
	else
		s->hp = NULL;
	gf_suppress_gain_slot_init(&s->hum_gain, s->hum_mem, s->nb, NULL);
	s->hum_top = p->hum_harmonics;
	if (p->hum)
		gf_suppress_set_hum(s, p->hum);
	gf_suppress_reset(s);
	*out = s;
	return 0;
}

void gf_suppress_free(struct gf_suppress *s)
{
	if (!s)
		return;
	gf_fftwf_planner_lock();
	if (s->r2c)
		fftwf_destroy_plan(s->r2c);
	if (s->c2r)
		fftwf_destroy_plan(s->c2r);
	gf_fftwf_planner_unlock();
	fftwf_free(s->time);
	fftwf_free(s->spec);
	fftwf_free(s->mem);
	free(s->ch);
	free(s);
}

uint32_t gf_suppress_latency(const struct gf_suppress *s)
{
	return s->n;
}

void gf_suppress_shape_of(const struct gf_suppress *s, struct gf_suppress_shape *out)
{
	*out = (struct gf_suppress_shape){.n = s->n,
					  .hop = s->hop,
					  .nb = s->nb,
					  .k = s->k,
					  .win = s->win,
					  .seed = s->seed,
					  .highpass = s->hp};
}

float gf_suppress_floor_gain(double depth_db, int bypass)
{
	return bypass ? 1.0f : (float)pow(10.0, -depth_db / 20.0);
}

void gf_suppress_set_floor(struct gf_suppress *s, float g)
{
	gf_suppress_floor_set(&s->floor, g, s->k.ramp_frames);
}

void gf_suppress_set_hum(struct gf_suppress *s, const struct gf_suppress_hum *h)
{
	float *t = gf_suppress_gain_slot_back(&s->hum_gain);
	int flat = gf_suppress_hum_mask(t, s->nb, s->n, s->rate, h, s->hum_top);
	gf_suppress_gain_slot_publish(&s->hum_gain, flat); /* flat: NULL, the floor as without hum */
}

const float *gf_suppress_hum_take(struct gf_suppress *s, int *changed)
{
	return gf_suppress_gain_slot_take(&s->hum_gain, changed);
}

void gf_suppress_reset(struct gf_suppress *s)
{
	/* A new stream starts from silence: the floor is at its target at once, nothing to ramp. */
	gf_suppress_floor_init(&s->floor, s->floor.target);
	s->k.g_min = s->floor.target;
	s->pos = 0;
	s->hold = 0;
	for (uint32_t c = 0; c < s->channels; c++) {
		struct sup_chan *ch = &s->ch[c];
		memset(ch->in, 0, sizeof(float) * s->n);
		memset(ch->ola, 0, sizeof(float) * s->n);
		memset(ch->out, 0, sizeof(float) * s->hop);
		gf_suppress_bins_reset(&ch->bins, s->seed);
	}
}

/* A hop is in: one frame of channel @p ch through the gain (its floor times @p hum per bin, the
 * hum's factor; NULL: the floor alone), added back. */
static void frame(struct gf_suppress *s, struct sup_chan *ch, const float *hum)
{
	analyse(s, ch->in);
	gf_suppress_bins_run(&ch->bins, &s->k, s->hp, hum, (float *)s->spec, s->nb, s->hold > 0);
	fftwf_execute_dft_c2r(s->c2r, s->spec, s->time);
	float scale = 1.0f / (float)s->n; /* FFTW's inverse is unnormalised */
	for (uint32_t i = 0; i < s->n; i++)
		ch->ola[i] += s->time[i] * s->win[i] * scale;
	memcpy(ch->out, ch->ola, sizeof(float) * s->hop);
	memmove(ch->ola, ch->ola + s->hop, sizeof(float) * (s->n - s->hop));
	memset(ch->ola + s->n - s->hop, 0, sizeof(float) * s->hop);
	memmove(ch->in, ch->in + s->hop, sizeof(float) * (s->n - s->hop));
}

void gf_suppress_process(struct gf_suppress *s, float *buf, uint32_t frames)
{
	const uint32_t C = s->channels, tail = s->n - s->hop;
	uint32_t done = 0;
	while (done < frames) {
		uint32_t take = s->hop - s->pos;
		if (take > frames - done)
			take = frames - done;
		for (uint32_t c = 0; c < C; c++) {
			struct sup_chan *ch = &s->ch[c];
			float *x = buf + (size_t)done * C + c;
			for (uint32_t i = 0; i < take; i++, x += C) {
				float v = *x;
				if (!isfinite(v)) { /* missing: silence, and the two frames holding it hold */
					v = 0.0f;
					s->hold = 2;
				}
				ch->in[tail + s->pos + i] = v;
				*x = ch->out[s->pos + i];
			}
		}
		s->pos += take;
		done += take;
		if (s->pos == s->hop) {
			s->k.g_min = gf_suppress_floor_next(&s->floor); /* the live depth, ramped */
			const float *hum = gf_suppress_gain_slot_take(&s->hum_gain, NULL);
			for (uint32_t c = 0; c < C; c++)
				frame(s, &s->ch[c], hum);
			s->hold -= s->hold > 0;
			s->pos = 0;
		}
	}
}
