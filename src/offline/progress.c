#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "error.h"

#define BAR_WIDTH 30
#define REDRAW_S 0.1 /* at most ten redraws a second: terminals are slow */

struct gf_progress {
	FILE *tty;
	uint64_t total;
	uint32_t rate;
	double start;
	double last_draw; /* time of the last drawing; negative before the first */
	size_t drawn_len; /* characters on the line now, 0 = nothing to erase */
};

int gf_progress_new(struct gf_progress **out, FILE *tty, uint64_t total_frames, uint32_t sample_rate)
{
	struct gf_progress *p = calloc(1, sizeof(*p));
	*out = p;
	if (!p)
		return GF_E_NOMEM;
	p->tty = tty;
	p->total = total_frames;
	p->rate = sample_rate;
	p->start = gf_now_s();
	p->last_draw = -1.0;
	return 0;
}

static void format_eta(char *buf, size_t len, double eta_s)
{
	if (eta_s < 0.0 || !isfinite(eta_s)) {
		snprintf(buf, len, "--:--");
		return;
	}
	unsigned long s = (unsigned long)(eta_s + 0.5);
	if (s >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%lu:%02lu", s / 60, s % 60);
}

void gf_progress_format(char *buf, size_t len, double fraction, double speed, double eta_s)
{
	char eta[32];
	format_eta(eta, sizeof(eta), eta_s);
	if (fraction < 0.0) {
		snprintf(buf, len, "%8.1fx realtime", speed);
		return;
	}
	if (fraction > 1.0)
		fraction = 1.0;
	char bar[BAR_WIDTH + 1];
	int fill = (int)(fraction * BAR_WIDTH);
	for (int i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	snprintf(buf, len, "%5.1f%% [%s] %7.1fx realtime  ETA %s", fraction * 100.0, bar, speed, eta);
}

void gf_progress_update(struct gf_progress *p, uint64_t frames_done)
{
	if (!p || !p->tty)
		return;
	double t = gf_now_s();
	if (p->last_draw >= 0.0 && t - p->last_draw < REDRAW_S)
		return;
	p->last_draw = t;
	double elapsed = t - p->start;
	double audio_s = p->rate ? (double)frames_done / p->rate : 0.0;
	double speed = elapsed > 0.0 ? audio_s / elapsed : 0.0;
	double fraction = p->total ? (double)frames_done / (double)p->total : -1.0;
	double eta = -1.0;
	if (p->total && frames_done > 0 && frames_done <= p->total)
		eta = elapsed * (double)(p->total - frames_done) / (double)frames_done;
	char line[160];
	gf_progress_format(line, sizeof(line), fraction, speed, eta);
	size_t n = strlen(line);
	/* Pad with spaces over a longer previous line instead of relying on ANSI codes. */
	fprintf(p->tty, "\r%s%*s", line, p->drawn_len > n ? (int)(p->drawn_len - n) : 0, "");
	fflush(p->tty);
	p->drawn_len = n > p->drawn_len ? n : p->drawn_len;
}

void gf_progress_finish(struct gf_progress *p)
{
	if (!p || !p->tty || p->drawn_len == 0)
		return;
	fprintf(p->tty, "\r%*s\r", (int)p->drawn_len, "");
	fflush(p->tty);
	p->drawn_len = 0;
}

double gf_progress_elapsed(const struct gf_progress *p)
{
	return p ? gf_now_s() - p->start : 0.0;
}

void gf_progress_free(struct gf_progress *p)
{
	if (!p)
		return;
	gf_progress_finish(p);
	free(p);
}
