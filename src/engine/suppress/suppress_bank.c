/*
 * The suppressors of a stream's channels. Each suppressed channel has a mono
 * suppressor of its own, so that the chains of different routes may set
 * different reductions and noise samples; a block is taken apart into one
 * channel at a time through a small scratch buffer (copies cost little next
 * to the transforms). Channels without a suppressor go through a delay line
 * of the suppressors' latency, which depends on the rate alone.
 */
#include "suppress_bank.h"

#include <stdlib.h>
#include <string.h>

/* Frames taken apart per pass: any call size is handled in pieces of this. */
#define SCRATCH_FRAMES 1024u

struct gf_suppress_bank {
	uint32_t channels, latency, active;
	struct gf_suppress **sup; /* per channel; NULL: delayed only */
	float *delay;		  /* latency frames per channel, interleaved */
	uint32_t delay_pos;
	float *scratch; /* SCRATCH_FRAMES */
};

void gf_suppress_bank_free(struct gf_suppress_bank *b)
{
	if (!b)
		return;
	for (uint32_t c = 0; b->sup && c < b->channels; c++)
		gf_suppress_free(b->sup[c]);
	free(b->sup);
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
	}
	return 0;
}

int gf_suppress_bank_new(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			 uint32_t rate, struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_suppress_bank *b = calloc(1, sizeof(*b));
	if (!b)
		return GF_E_NOMEM;
	b->channels = channels;
	int r = GF_E_NOMEM;
	if (!(b->sup = calloc(channels ? channels : 1, sizeof(*b->sup))) ||
	    !(b->scratch = malloc(SCRATCH_FRAMES * sizeof(float))))
		goto fail;
	if ((r = make_suppressors(b, per_channel, rate, eb)))
		goto fail;
	if (!b->active) {
		gf_errbuf_set(eb, "no channel has a suppressor");
		r = GF_E_INVAL;
		goto fail;
	}
	r = GF_E_NOMEM;
	if (b->active < channels && !(b->delay = calloc((size_t)b->latency * channels, sizeof(float))))
		goto fail;
	*out = b;
	return 0;
fail:
	gf_suppress_bank_free(b);
	return r;
}

uint32_t gf_suppress_bank_latency(const struct gf_suppress_bank *b)
{
	return b ? b->latency : 0;
}

uint32_t gf_suppress_bank_active(const struct gf_suppress_bank *b)
{
	return b ? b->active : 0;
}

/* Channel @p c of @p frames frames through its suppressor, via the scratch buffer. */
static void suppress_channel(struct gf_suppress_bank *b, uint32_t c, float *buf, uint32_t frames)
{
	uint32_t ch = b->channels;
	for (uint32_t i = 0; i < frames; i++)
		b->scratch[i] = buf[(size_t)i * ch + c];
	gf_suppress_process(b->sup[c], b->scratch, frames);
	for (uint32_t i = 0; i < frames; i++)
		buf[(size_t)i * ch + c] = b->scratch[i];
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

void gf_suppress_bank_process(struct gf_suppress_bank *b, float *buf, uint32_t frames)
{
	if (b->channels == 1) { /* mono: in place, no copies */
		gf_suppress_process(b->sup[0], buf, frames);
		return;
	}
	for (uint32_t done = 0; done < frames;) {
		uint32_t n = frames - done < SCRATCH_FRAMES ? frames - done : SCRATCH_FRAMES;
		float *piece = buf + (size_t)done * b->channels;
		for (uint32_t c = 0; c < b->channels; c++)
			if (b->sup[c])
				suppress_channel(b, c, piece, n);
		if (b->delay)
			delay_rest(b, piece, n);
		done += n;
	}
}

void gf_suppress_bank_reset(struct gf_suppress_bank *b)
{
	for (uint32_t c = 0; c < b->channels; c++)
		if (b->sup[c])
			gf_suppress_reset(b->sup[c]);
	if (b->delay)
		memset(b->delay, 0, (size_t)b->latency * b->channels * sizeof(float));
	b->delay_pos = 0;
}
