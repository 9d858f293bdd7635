/* Live hum detection (docs/daemon.md, "Hum notches found live"): where the
 * config has a notch with freq_hz = "auto", the stream's worker copies its
 * input, averaged to mono, into an input tap (src/stream/input_tap.h); the
 * control loop drains it every pass (at least every LOOP_MS), keeps a few
 * seconds of it in a hum tracker (src/design/hum_track.h) that runs the hum
 * detector once a second with hysteresis, and when the tracker's set differs
 * from the one the running filter notches, starts a reload: the one reload
 * path (build thread, swap with a crossfade), whose build carries the set
 * (gf_config_source.hum). A failed build keeps the running filter, is
 * logged, and is not tried again for the same set.
 *
 * Where the notch's chains end in a suppressor and run minimum phase (live:
 * gf_config_hum_in_suppressor_any), the suppressors remove the hum in their
 * frames instead (suppress_hum.h): a new set goes straight to the running
 * suppressors, lock-free, with no reload and no FIR rebuilt. */
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "hum_track.h"
#include "input_tap.h"
#include "log.h"

#define MAX_STALE_TAPS 16 /* taps a stuck worker or a left-behind open may still write: kept */

struct gf_dm_hum {
	struct gf_input_tap *tap; /* the running stream's (or the last one's) */
	uint32_t tap_frames;	  /* the capacity asked for */
	unsigned tap_abandoned;	  /* d->engines_abandoned when the tap was made */
	float *buf;		  /* one drain's samples, tap_frames of them */
	struct gf_hum_track *track;
	uint32_t rate, hmax; /* the tracker's */
	uint64_t dropped_seen, dropped;
	int drop_warned;
	struct gf_hum found;  /* the tracker's set */
	struct gf_hum failed; /* a set whose build failed: not tried again */
	int failed_set;
};

/* Taps a stuck worker or a left-behind open may still write: kept reachable here, never freed. */
static struct gf_input_tap *stale_taps[MAX_STALE_TAPS];
static unsigned n_stale_taps;

/* Same family and harmonics (the fundamental measured may differ a little). */
static int same_set(const struct gf_hum *a, const struct gf_hum *b)
{
	if (a->n != b->n || gf_hum_family(a->f0_hz) != gf_hum_family(b->f0_hz))
		return 0;
	return memcmp(a->harmonic, b->harmonic, a->n * sizeof(a->harmonic[0])) == 0;
}

static struct gf_dm_hum *state(struct daemon *d)
{
	if (!d->hum)
		d->hum = calloc(1, sizeof(*d->hum));
	return d->hum;
}

/* Let go of the tap. It is freed only when no stream can still write it: a worker abandoned
 * since it was made, or a PortAudio call left behind (an open that may yet start its stream
 * on it), keeps it, as they keep the engine (daemon_stream.c), until the process ends. */
static void drop_tap(const struct daemon *d, struct gf_dm_hum *h)
{
	if (h->tap && (d->audio_stuck || d->engines_abandoned != h->tap_abandoned)) {
		if (n_stale_taps < MAX_STALE_TAPS)
			stale_taps[n_stale_taps++] = h->tap;
	} else {
		gf_input_tap_free(h->tap);
	}
	h->tap = NULL;
	free(h->buf);
	h->buf = NULL;
}

/* A tracker for the config's rate and harmonics; its set is kept when they stay. */
static int tracker_for(struct gf_dm_hum *h, uint32_t rate, uint32_t hmax)
{
	if (h->track && h->rate == rate && h->hmax == hmax)
		return 0;
	gf_hum_track_free(h->track);
	h->track = NULL;
	memset(&h->found, 0, sizeof(h->found));
	struct gf_errbuf eb = {{0}};
	int r = gf_hum_track_new(&h->track, rate, hmax, &eb);
	if (r) {
		gf_warn("hum detection off: %s", eb.msg[0] ? eb.msg : gf_strerror(r));
		return r;
	}
	h->rate = rate, h->hmax = hmax;
	return 0;
}

struct gf_input_tap *gf_dm_hum_tap(struct daemon *d)
{
	uint32_t hmax, rate = d->cfg->sample_rate;
	if (!gf_config_hum_auto(d->cfg, &hmax)) {
		if (d->hum)
			gf_hum_track_free(d->hum->track), d->hum->track = NULL;
		return NULL;
	}
	struct gf_dm_hum *h = state(d);
	/* A second at the rate: the loop drains it at least every LOOP_MS. */
	uint32_t want = rate > 8 * d->cfg->block_frames ? rate : 8 * d->cfg->block_frames;
	if (!h || tracker_for(h, rate, hmax))
		return NULL;
	if (h->tap && (h->tap_frames < want || h->tap_abandoned != d->engines_abandoned))
		drop_tap(d, h);
	struct gf_errbuf eb = {{0}};
	if (!h->tap) {
		h->tap_abandoned = d->engines_abandoned; /* no worker has had it: drop_tap may free it */
		if (gf_input_tap_new(&h->tap, want, &eb) != 0 || !(h->buf = malloc(want * sizeof(float)))) {
			gf_warn("hum detection off: %s", eb.msg[0] ? eb.msg : "out of memory");
			drop_tap(d, h);
			return NULL;
		}
		h->tap_frames = want;
		h->dropped_seen = 0;
	}
	while (gf_input_tap_read(h->tap, h->buf, h->tap_frames)) /* the last stream's tail */
		;
	h->dropped_seen = gf_input_tap_dropped(h->tap);
	gf_hum_track_restart(h->track); /* a new stream: the history starts again */
	return h->tap;
}

/* Drain the tap into the tracker; a drop restarts the history (a gap would smear the spectrum). */
static void drain(struct gf_dm_hum *h)
{
	uint32_t n;
	while ((n = gf_input_tap_read(h->tap, h->buf, h->tap_frames)) > 0)
		gf_hum_track_push(h->track, h->buf, n);
	uint64_t dropped = gf_input_tap_dropped(h->tap);
	if (dropped != h->dropped_seen) {
		h->dropped += dropped - h->dropped_seen;
		h->dropped_seen = dropped;
		gf_hum_track_restart(h->track);
		if (!h->drop_warned)
			gf_warn("hum detection: %llu input samples dropped (the control loop did not drain "
				"them in time): the analysis starts again; counted in the status",
				(unsigned long long)h->dropped);
		h->drop_warned = 1;
	}
}

/* The suppressors remove the hum (see the top): the set found, once it differs from the one they
 * remove (also after a reload whose build carried an older one), goes to them directly. */
static void to_suppressor(struct daemon *d, struct gf_dm_hum *h)
{
	if (!d->suppress || !gf_config_hum_in_suppressor_any(d->cfg) ||
	    (d->cfg->hum_followed && same_set(&h->found, &d->cfg->live_hum) &&
	     h->found.f0_hz == d->cfg->live_hum.f0_hz))
		return;
	gf_config_suppress_set_hum(d->suppress, &h->found);
	d->cfg->live_hum = h->found;
	d->cfg->hum_followed = 1;
	char now[200];
	gf_hum_describe(&h->found, now, sizeof(now));
	gf_info("hum: the suppressors remove %s at %.3f Hz in their frames (zero phase, no latency)", now,
		h->found.f0_hz);
}

void gf_dm_hum_poll(struct daemon *d)
{
	struct gf_dm_hum *h = d->hum;
	uint32_t hmax;
	if (!h || !h->tap || !h->track || !d->live || d->engine_stuck)
		return;
	/* A reload that swapped in other harmonics starts the tracker afresh; one that removed the
	 * notch stops it until the next stream start. */
	if (!gf_config_hum_auto(d->cfg, &hmax) || tracker_for(h, d->cfg->sample_rate, hmax) != 0) {
		while (gf_input_tap_read(h->tap, h->buf, h->tap_frames))
			;
		return;
	}
	drain(h);
	struct gf_errbuf eb = {{0}};
	int r = gf_hum_track_step(h->track, &eb);
	if (r < 0) {
		gf_warn("hum detection: %s", eb.msg[0] ? eb.msg : gf_strerror(r));
		return;
	}
	if (r == 1) {
		char was[200], now[200];
		gf_hum_describe(&h->found, was, sizeof(was));
		gf_hum_track_active(h->track, &h->found);
		gf_hum_describe(&h->found, now, sizeof(now));
		gf_notice("hum in the running input: %s at %.3f Hz (was %s)", now, h->found.f0_hz, was);
	}
	to_suppressor(d, h);
}

int gf_dm_hum_due(struct daemon *d, char *trigger, size_t len)
{
	struct gf_dm_hum *h = d->hum;
	uint32_t hmax;
	if (!h || !h->track || !h->tap || !d->live || d->engine_stuck || d->build || !d->cfg->hum_followed ||
	    !gf_config_hum_auto(d->cfg, &hmax) || gf_config_hum_in_suppressor_any(d->cfg))
		return 0; /* the suppressors' hum needs no reload (to_suppressor) */
	if (same_set(&h->found, &d->cfg->live_hum) || (h->failed_set && same_set(&h->found, &h->failed)))
		return 0;
	char now[200];
	gf_hum_describe(&h->found, now, sizeof(now));
	snprintf(trigger, len, "hum in the running input: %s", now);
	return 1;
}

void gf_dm_hum_for_build(const struct daemon *d, struct gf_hum *out)
{
	if (d->hum && d->hum->track)
		*out = d->hum->found;
	else if (d->cfg)
		*out = d->cfg->live_hum; /* what the running filter notches */
	else
		memset(out, 0, sizeof(*out));
}

void gf_dm_hum_built(struct daemon *d, const struct gf_hum *carried)
{
	struct gf_dm_hum *h = d->hum;
	if (!h || !d->cfg)
		return;
	h->failed_set = !same_set(carried, &d->cfg->live_hum); /* the build did not take */
	if (h->failed_set)
		h->failed = *carried;
}

void gf_dm_hum_status(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_dm_hum *h = d->hum;
	uint32_t hmax;
	if (!d->cfg || !gf_config_hum_auto(d->cfg, &hmax) || !h || !h->track) {
		snprintf(buf, len, "hum: off\n");
		return;
	}
	char now[200], found[200];
	gf_hum_describe(&d->cfg->live_hum, now, sizeof(now));
	gf_hum_describe(&h->found, found, sizeof(found));
	snprintf(buf, len,
		 "hum: %s\nhum_f0_hz: %.3f\nhum_found: %s\nhum_analyses: %llu\nhum_dropped_samples: %llu\n",
		 now, d->cfg->live_hum.f0_hz, found, (unsigned long long)gf_hum_track_analyses(h->track),
		 (unsigned long long)h->dropped);
}

void gf_dm_hum_free(struct daemon *d)
{
	struct gf_dm_hum *h = d->hum;
	if (!h)
		return;
	gf_hum_track_free(h->track);
	drop_tap(d, h);
	free(h);
	d->hum = NULL;
}
