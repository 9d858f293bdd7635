/* The JACK period changes while gpufir plays (as PipeWire changes its quantum).
 *
 * `gpufir --live` as systemd runs it, against a private JACK server (dummy
 * driver, sync mode) at period 64. Two JACK test clients play noise through
 * it and record what comes back; meanwhile `jack_bufsize` sets the period to
 * 256, then to 128. After each change gpufir must re-derive its latency and
 * publish it (status socket, STATUS=, log), count a resync, and its output
 * underflows must stop growing within a second; the recording must be the
 * reference convolution at the reported latency before the first change and
 * at each new reported latency from a second after each change, window by
 * window, with at most one disturbed window around each change.
 *
 * Under a real PipeWire server (scripts/with-pipewire.sh sets
 * GPUFIR_TEST_PIPEWIRE=1 and runs this through pw-jack): the same through
 * PipeWire's JACK library, gpufir on its null sink, and the quantum forced
 * with `pw-metadata -n settings 0 clock.force-quantum N`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define TAPS 63
#define SIG_S 9
#define SIG_FRAMES (RATE * SIG_S)
#define REC_FRAMES (SIG_FRAMES + RATE)
#define WIN 2400 /* frames per checked window (50 ms) */
#define TOL 1e-5 /* rel. L2 per window */
#define N_PHASES 3

static struct gf_daemon dm;
static int pipewire; /* GPUFIR_TEST_PIPEWIRE=1: a running PipeWire server, not a private jackd */
static const char *device = "system";
static float h[TAPS];
static float *x;
static double *y;

static double rel_err(const float *rec, uint32_t n, size_t m, size_t len, long d)
{
	double err = 0, ref = 0;
	if (d < 0 || m + len + (size_t)d > n)
		return INFINITY;
	for (size_t i = m * CH; i < (m + len) * CH; i++) {
		double e = rec[i + (size_t)d * CH] - y[i];
		err += e * e;
		ref += y[i] * y[i];
	}
	return sqrt(err / ref);
}

static void setup_files(uint64_t *rng)
{
	gf_daemon_init(&dm, "daemon-period");
	gf_test_fill_decaying_taps(h, TAPS, rng);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, TAPS);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, 64, "cpu", CH, device);
	fprintf(f, "filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		   "chain = [\"f\"];\n");
	CHECK(fclose(f) == 0);
	x = gf_test_noise((size_t)SIG_FRAMES * CH, rng);
	for (size_t i = 0; i < (size_t)SIG_FRAMES * CH; i++)
		x[i] *= 0.3f;
	y = gf_test_reference_mono_filter(x, SIG_FRAMES, CH, h, TAPS);
}

struct phase {
	uint32_t period;
	long start; /* the signal's frame where the graph's period became this one */
	long latency, resyncs, under_1s, under_2s;
	char status[1024]; /* STATUS= a second after the change */
};

static void set_period(uint32_t n)
{
	char cmd[128];
	if (pipewire)
		snprintf(cmd, sizeof(cmd), "pw-metadata -n settings 0 clock.force-quantum %u >/dev/null 2>&1",
			 n);
	else
		snprintf(cmd, sizeof(cmd), "jack_bufsize %u >/dev/null 2>&1", n);
	if (system(cmd) != 0)
		gf_daemon_die(&dm, pipewire ? "pw-metadata failed" : "jack_bufsize failed");
}

/* A second after the change, and two: the latency published, underflows settled. */
static void observe(struct phase *p)
{
	char st[GF_STATUS_MAX];
	gf_daemon_idle_ms(&dm, 1000);
	gf_daemon_query_status(&dm, st, sizeof(st));
	p->latency = gf_daemon_status_num(st, "latency_frames");
	p->resyncs = gf_daemon_status_num(st, "resyncs");
	p->under_1s = gf_daemon_status_num(st, "output_underflows");
	CHECK(gf_daemon_status_num(st, "device_period") == (long)p->period);
	snprintf(p->status, sizeof(p->status), "%s", dm.nl.last_status);
	gf_daemon_idle_ms(&dm, 1000);
	gf_daemon_query_status(&dm, st, sizeof(st));
	p->under_2s = gf_daemon_status_num(st, "output_underflows");
	printf("period %u: latency %ld frames, resyncs %ld, underflows %ld after 1 s, %ld after 2 s; "
	       "STATUS=%s\n",
	       p->period, p->latency, p->resyncs, p->under_1s, p->under_2s, p->status);
}

/* The delay in [around - 8192, around + 8192] at which window @p m fits
 * best, and its error: a wrong window at the right delay plus some
 * periods is a slip of the alignment (a cycle missed somewhere), not a
 * wrong signal. */
static long best_delay(const float *rec, uint32_t n, size_t m, long around, double *err)
{
	long best = around;
	*err = INFINITY;
	for (long d = around - 8192; d <= around + 8192; d++) {
		double e = rel_err(rec, n, m, WIN / 4, d); /* a quarter window: coarse */
		if (e < *err) {
			*err = e;
			best = d;
		}
	}
	*err = rel_err(rec, n, m, WIN, best);
	return best;
}

/* The graph's cycles, as the rig's two clients saw them: every cycle either
 * ran in (frame time, frames), in order, and the audio that went through
 * the graph before each (the sum of the earlier cycles' frames). Audio
 * moves one cycle at a time, so a position in this sum is where a frame is
 * in every client that ran every cycle, whatever the frame time did (it
 * jumps on a quantum change or a late driver wake-up, for all clients). */
static uint32_t *g_time;
static long *g_pos;
static uint32_t g_n;

static void graph_cycles(const struct gf_jack_rig *rig)
{
	const struct gf_jack_cycles *c[2] = {gf_jack_rig_cycles(rig, 0), gf_jack_rig_cycles(rig, 1)};
	uint32_t n[2] = {atomic_load(&c[0]->count), atomic_load(&c[1]->count)}, k[2] = {0, 0};
	g_time = malloc(sizeof(uint32_t) * (n[0] + n[1] + 1));
	g_pos = malloc(sizeof(long) * (n[0] + n[1] + 1));
	CHECK(g_time && g_pos);
	long pos = 0;
	g_n = 0;
	while (k[0] < n[0] || k[1] < n[1]) {
		int w = k[1] >= n[1] || (k[0] < n[0] && c[0]->time[k[0]] <= c[1]->time[k[1]]) ? 0 : 1;
		uint32_t t = c[w]->time[k[w]], f = c[w]->frames[k[w]];
		k[w]++;
		if (g_n && g_time[g_n - 1] == t)
			continue; /* the same cycle, seen again */
		g_time[g_n] = t;
		g_pos[g_n++] = pos;
		pos += f;
	}
}

static long graph_pos(uint32_t t)
{
	uint32_t lo = 0, hi = g_n;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (g_time[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return g_n ? g_pos[lo] : 0;
}

/* Frames of graph audio a rig client missed before its own frame @p idx:
 * cycles the graph ran without it, less cycles it ran twice. PipeWire
 * runs a cycle without a client that is woken late and tells the client
 * nothing, so its own frame count slips against the graph. */
static long skipped_before(const struct gf_jack_cycles *c, long idx)
{
	uint32_t cnt = atomic_load(&c->count), pos = 0, k = 0;
	while (k + 1 < cnt && (long)(pos + c->frames[k]) <= idx)
		pos += c->frames[k++];
	return cnt ? graph_pos(c->time[k]) - graph_pos(c->time[0]) - (long)pos : 0;
}

/* How far from a slip a window may be torn: a client woken late can be
 * told the new cycle's frame time and still read the previous cycle's
 * buffers for a few cycles (seen: a recording shifted 128 frames only some
 * 400 frames after the cycle whose frame time jumped). */
#define TEAR 1024

/* Whether a cycle of @p c starting within [lo, hi] of its own frames did not
 * follow its previous one in frame time. Every such discontinuity tears
 * the windows around it, even where the graph accounts for it: a cycle
 * missed and one run twice leave the count where it was but a cycle's
 * audio wrong, and a cycle both clients missed is not in the graph's
 * cycles at all (gpufir may have run it). Quantum changes excepted. */
static int jumps_within(const struct gf_jack_cycles *c, long lo, long hi)
{
	uint32_t cnt = atomic_load(&c->count);
	long pos = 0;
	for (uint32_t k = 1; k < cnt && pos <= hi; k++) {
		pos += c->frames[k - 1];
		/* Not at a quantum change: the frame time jumps there for every
		 * client, no audio lost, and the change's own glitch is checked. */
		if (pos >= lo && pos <= hi && c->time[k] != c->time[k - 1] + c->frames[k - 1] &&
		    c->frames[k] == c->frames[k - 1])
			return 1;
	}
	return 0;
}

/* Where the reference's window @p m lies in the recording: the delay through
 * gpufir (@p d) corrected for the cycles the player and the recorder missed
 * (PipeWire runs a graph cycle without a client that is woken late, and
 * tells it nothing: the client's own frame count then slips against the
 * graph). @return 0, or 1 if a frame-time discontinuity of either client
 * falls within TEAR frames of the window or of the filter's memory before
 * it (no single delay describes it). */
static int rig_delay(const struct gf_jack_rig *rig, size_t m, long d, long *delay)
{
	const struct gf_jack_cycles *pc = gf_jack_rig_cycles(rig, 0), *rc = gf_jack_rig_cycles(rig, 1);
	long gp = skipped_before(pc, (long)m);
	int torn = jumps_within(pc, (long)m - TAPS - TEAR, (long)m + WIN + TEAR);
	long j = (long)m + d + gp, gr = 0;
	for (int i = 0; i < 4; i++) { /* j depends on the recorder's slips before it */
		gr = skipped_before(rc, j);
		j = (long)m + d + gp - gr;
	}
	torn |= jumps_within(rc, j - TAPS - TEAR, j + WIN + TEAR);
	*delay = d + gp - gr;
	return torn;
}

/* The player's first frame, at or after @p after, of a cycle @p period
 * frames long that follows a cycle of another length: where the change
 * reached the graph in the signal. Not the wall clock: a dummy driver on a
 * loaded machine falls behind it (seen: 0.25 s by the first change, with
 * 209 xruns), and a window checked at the old latency then holds the new.
 * -1 if the signal ended first. */
static long change_start(const struct gf_jack_rig *rig, long after, uint32_t period)
{
	const struct gf_jack_cycles *c = gf_jack_rig_cycles(rig, 0);
	uint32_t cnt = atomic_load(&c->count);
	long pos = 0;
	for (uint32_t k = 1; k < cnt; k++) {
		pos += c->frames[k - 1];
		if (pos >= after && c->frames[k] == period && c->frames[k - 1] != period)
			return pos;
	}
	return -1;
}

/* Each window: the reference at the phase's delay (corrected for the rig's
 * own slips); around a change (from 0.2 s before to 1 s after) either delay,
 * or neither in one glitch: the window where the delay steps, and the input
 * a shorter latency skips. A window a rig client's slip tears is not
 * checked (counted apart); at least half of each phase's must be. */
static void check_recording(const float *rec, uint32_t n, const struct phase *ph, long offset,
			    const struct gf_jack_rig *rig)
{
	int bad_total = 0;
	for (int k = 0; k < N_PHASES; k++) {
		size_t from = k ? (size_t)ph[k].start - RATE / 5 : (size_t)RATE / 10;
		size_t to = k + 1 < N_PHASES ? (size_t)ph[k + 1].start - RATE / 5 : SIG_FRAMES;
		size_t settle_end = k ? from + RATE / 5 + RATE : 0;
		long skip = k && ph[k].latency < ph[k - 1].latency ? ph[k - 1].latency - ph[k].latency : 0;
		int exact = 0, settling = 0, neither = 0, torn = 0, windows = 0;
		for (size_t m = from / WIN * WIN; m + WIN <= to && m + WIN <= SIG_FRAMES; m += WIN) {
			long d, d_old;
			windows++;
			if (rig_delay(rig, m, ph[k].latency + offset, &d)) {
				torn++;
				continue;
			}
			double e = rel_err(rec, n, m, WIN, d);
			if (e < TOL) {
				exact++;
				continue;
			}
			if (m < settle_end) {
				rig_delay(rig, m, ph[k - 1].latency + offset, &d_old);
				if (rel_err(rec, n, m, WIN, d_old) < TOL)
					settling++;
				else
					neither++;
				continue;
			}
			if (bad_total++ < 3) {
				double be;
				long bd = best_delay(rec, n, m, d, &be);
				fprintf(stderr,
					"period %u: window at frame %zu (%.3f s): rel L2 %.2e at delay %ld "
					"(%+ld for the rig's slips); best fit: delay %ld (%+ld frames), rel "
					"L2 %.2e\n",
					ph[k].period, m, (double)m / RATE, e, d, d - (ph[k].latency + offset),
					bd, bd - d, be);
			}
		}
		printf("period %u: %d windows exact at latency %ld, %d still at the old one, %d neither (the "
		       "glitch; %ld input frames skipped), %d of %d torn by a slip of the rig's clients\n",
		       ph[k].period, exact, ph[k].latency, settling, neither, skip, torn, windows);
		CHECK(neither <= 1 + (skip + WIN - 1) / WIN && exact > 0 && 2 * torn <= windows);
	}
	if (bad_total)
		gf_daemon_die(&dm, "the recording is not the reference at the reported latency");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	const char *pw = getenv("GPUFIR_TEST_PIPEWIRE");
	pipewire = pw && strcmp(pw, "1") == 0;
	if (pipewire)
		device = "gf-null-sink"; /* with-pipewire.sh's null sink */
	else if (system("command -v jack_bufsize >/dev/null 2>&1") != 0)
		gf_test_skip("jack_bufsize not installed");
	uint64_t rng = gf_test_seed("test_daemon_period");
	setup_files(&rng);
	if (pipewire) {
		/* pw-jack puts PipeWire's libjack first: the rig and gpufir both load it. */
		const char *lp = getenv("LD_LIBRARY_PATH");
		if (!lp || !strstr(lp, "pipewire"))
			gf_test_skip(
				"GPUFIR_TEST_PIPEWIRE=1 but not under pw-jack (scripts/with-pipewire.sh)");
		printf("server: PipeWire through pw-jack (%s), device %s\n", lp, device);
		set_period(64);
	} else if (gf_jack_server_start(&dm.jack, "gpufir-period", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 2.0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	struct gf_jack_rig *rig = gf_jack_rig_open(CH, REC_FRAMES);
	if (!rig || gf_jack_rig_connect(rig, "gpufir", 1) != 0)
		gf_daemon_die(&dm, "cannot connect the JACK test clients to gpufir");
	gf_daemon_idle_ms(&dm, 100);
	struct phase ph[N_PHASES] = {{.period = 64}, {.period = 256}, {.period = 128}};
	gf_jack_rig_record(rig);
	gf_jack_rig_play(rig, x, SIG_FRAMES, NULL, NULL);
	double t0 = gf_now_s();
	observe(&ph[0]);
	for (int k = 1; k < N_PHASES; k++) {
		gf_daemon_idle_ms(&dm, 500);
		set_period(ph[k].period);
		observe(&ph[k]);
	}
	while (!gf_jack_rig_played(rig) && gf_now_s() < t0 + 30.0)
		gf_daemon_idle_ms(&dm, 50);
	gf_daemon_idle_ms(&dm, 300);
	const float *rec;
	uint32_t n = gf_jack_rig_stop_recording(rig, &rec);
	/* The player's first frame against the recorder's, in graph audio (not
	 * frame time, which jumps at a quantum change). */
	graph_cycles(rig);
	long offset = graph_pos(gf_jack_rig_play_time(rig)) - graph_pos(gf_jack_rig_record_time(rig));
	printf("JACK xruns seen by the test clients: %u; clients' offset %ld frames\n",
	       gf_jack_rig_xruns(rig), offset);
	/* A client that missed a cycle shifts the recording against the signal
	 * by that many frames from there on, whatever gpufir did. */
	uint32_t gaps_p = gf_jack_rig_cycle_gaps(rig, 0, stdout),
		 gaps_r = gf_jack_rig_cycle_gaps(rig, 1, stdout);
	printf("graph cycles %u; player %u, recorder %u; frame-time discontinuities: player %u, recorder %u; "
	       "graph audio missed: player %ld frames, recorder %ld frames\n",
	       g_n, atomic_load(&gf_jack_rig_cycles(rig, 0)->count),
	       atomic_load(&gf_jack_rig_cycles(rig, 1)->count), gaps_p, gaps_r,
	       skipped_before(gf_jack_rig_cycles(rig, 0), SIG_FRAMES),
	       skipped_before(gf_jack_rig_cycles(rig, 1), REC_FRAMES));

	/* duplex, period p >= block 64, slack s: p + s * p (docs/live.md) */
	uint32_t slack = gf_test_latency_slack();
	for (int k = 0; k < N_PHASES; k++) {
		char want[64];
		snprintf(want, sizeof(want), "latency %ld frames", ph[k].latency);
		CHECK(ph[k].latency == (long)(ph[k].period * (1 + slack)));
		CHECK(ph[k].resyncs == k && ph[k].under_2s == ph[k].under_1s);
		CHECK(strstr(ph[k].status, want) != NULL);
	}
	for (int k = 1; k < N_PHASES; k++) {
		ph[k].start = change_start(rig, ph[k - 1].start, ph[k].period);
		printf("period %u: from the signal's frame %ld (%.3f s)\n", ph[k].period, ph[k].start,
		       (double)ph[k].start / RATE);
		/* Half a second of audio a phase at least: the checks need some windows. */
		if (ph[k].start < ph[k - 1].start + RATE / 2)
			gf_daemon_die(&dm, "a period change is not in the player's cycles, or came "
					   "within half a second of the previous phase");
	}
	check_recording(rec, n, ph, offset, rig);
	gf_jack_rig_close(rig);
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "grep -c 'latency now ' '%s' | grep -qx 2", dm.log_path);
	CHECK(system(cmd) == 0);
	gf_daemon_terminate(&dm, 20.0, "");
	gf_daemon_finish(&dm);
	free(x);
	free(y);
	free(g_time);
	free(g_pos);
	puts("test_daemon_period: ok");
	return 0;
}
