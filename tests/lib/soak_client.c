/* The JACK side of bench/soak-live.sh (a program, not a test).
 *
 *   soak_client taps FILE N SEED        write N decaying-noise taps, one per line
 *   soak_client run SECONDS TAPS [CLIENT]
 *
 * `run` opens two JACK clients (a player and a recorder: two, so that the
 * graph player -> gpufir -> recorder has no feedback loop and runs in one
 * cycle), connects them to CLIENT's ports (default "gpufir"), plays SECONDS of
 * noise plus a counting ramp, generated on the fly from the frame number, and
 * records what comes back. Then it checks the recording against the
 * double-precision reference convolution with the taps in TAPS: one constant
 * delay (found on the first half second of signal), then every one-second
 * window to rel. L2 < 1e-5, so a single lost or repeated sample fails. After
 * a bad window it looks for a new constant delay (a latency step: period
 * change or auto slack) and goes on from there; it prints the steps and the
 * glitches (runs of bad windows). Prints `key: value` lines for the script
 * and exits 0 only if every window matched. */
#include <errno.h>
#include <jack/jack.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define CH 2
#define MAX_TAPS 65536
#define MAX_DELAY 16384 /* frames searched for the output delay */
#define TOL 1e-5	/* rel. L2 per window: float32 engine against double */
#define RAMP 4800	/* ramp period, frames: a counting signal, 10 Hz at 48 kHz */

static jack_client_t *play_c, *rec_c;
static jack_port_t *play_port[CH], *rec_port[CH];
static float *rec;		       /* interleaved recording */
static size_t rec_cap, play_frames;    /* frames */
static atomic_size_t played, recorded; /* frames so far */
static atomic_int go;		       /* 1: play and record from the next cycle */
static atomic_uint jack_xruns;
static size_t rate; /* the server's sample rate */
static volatile sig_atomic_t interrupted;

/* ---- the signal: a pure function of (frame, channel) --------------------- */

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static float signal_at(size_t n, int c)
{
	double noise = (double)(mix((uint64_t)n * CH + (uint64_t)c + 1u) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
	double ramp = (double)(n % RAMP) / (RAMP / 2) - 1.0;
	/* Peaks near -2 dBFS after the soak's filters (decaying noise, gain ~2.5). */
	return (float)(0.08 * noise + 0.04 * ramp * (c ? -1.0 : 1.0));
}

/* ---- JACK callbacks (RT: no allocation, no locks) ------------------------ */

static int play_process(jack_nframes_t n, void *arg)
{
	size_t p = atomic_load_explicit(&played, memory_order_relaxed);
	int on = atomic_load_explicit(&go, memory_order_acquire);
	for (int c = 0; c < CH; c++) {
		float *o = jack_port_get_buffer(play_port[c], n);
		for (jack_nframes_t i = 0; i < n; i++)
			o[i] = on && p + i < play_frames ? signal_at(p + i, c) : 0.0f;
	}
	if (on)
		atomic_store_explicit(&played, p + n, memory_order_release);
	return 0;
}

static int rec_process(jack_nframes_t n, void *arg)
{
	if (!atomic_load_explicit(&go, memory_order_acquire))
		return 0;
	size_t r = atomic_load_explicit(&recorded, memory_order_relaxed);
	size_t k = rec_cap - r < n ? rec_cap - r : n;
	for (int c = 0; c < CH; c++) {
		const float *in = jack_port_get_buffer(rec_port[c], n);
		for (size_t i = 0; i < k; i++)
			rec[(r + i) * CH + c] = in[i];
	}
	atomic_store_explicit(&recorded, r + k, memory_order_release);
	return 0;
}

static int on_xrun(void *arg)
{
	atomic_fetch_add(&jack_xruns, 1);
	return 0;
}

/* ---- setup --------------------------------------------------------------- */

static jack_client_t *open_client(const char *name, JackProcessCallback cb, jack_port_t **ports,
				  unsigned long flags)
{
	jack_status_t st;
	jack_client_t *c = jack_client_open(name, JackNoStartServer, &st);
	if (!c) {
		fprintf(stderr, "soak_client: jack_client_open(%s) failed, status 0x%x\n", name,
			(unsigned)st);
		exit(1);
	}
	jack_set_process_callback(c, cb, NULL);
	for (int i = 0; i < CH; i++) {
		char pn[16];
		snprintf(pn, sizeof(pn), "%s_%d", flags == JackPortIsOutput ? "out" : "in", i + 1);
		ports[i] = jack_port_register(c, pn, JACK_DEFAULT_AUDIO_TYPE, flags, 0);
		CHECK(ports[i]);
	}
	return c;
}

/* Disconnect @p port (a port of the client under test) from everything. */
static void disconnect_all(const char *port)
{
	jack_port_t *p = jack_port_by_name(play_c, port);
	const char **peers = p ? jack_port_get_all_connections(play_c, p) : NULL;
	for (int i = 0; peers && peers[i]; i++) {
		if (jack_port_flags(p) & JackPortIsInput)
			jack_disconnect(play_c, peers[i], port);
		else
			jack_disconnect(play_c, port, peers[i]);
	}
	jack_free(peers);
}

static void connect_to(const char *client)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "^%s[^:]*:", client);
	const char **ins = jack_get_ports(play_c, pat, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput);
	const char **outs = jack_get_ports(play_c, pat, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput);
	for (int c = 0; c < CH; c++) {
		if (!ins || !ins[c] || !outs || !outs[c]) {
			fprintf(stderr, "soak_client: JACK client %s has fewer than %d ins and outs\n",
				client, CH);
			exit(1);
		}
		disconnect_all(ins[c]);
		disconnect_all(outs[c]);
		CHECK(jack_connect(play_c, jack_port_name(play_port[c]), ins[c]) == 0);
		CHECK(jack_connect(play_c, outs[c], jack_port_name(rec_port[c])) == 0);
	}
	jack_free(ins);
	jack_free(outs);
}

static float *read_taps(const char *path, uint32_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "soak_client: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	float *h = malloc(sizeof(float) * MAX_TAPS);
	CHECK(h);
	*n = 0;
	while (*n < MAX_TAPS && fscanf(f, "%f", &h[*n]) == 1)
		(*n)++;
	fclose(f);
	CHECK(*n > 0);
	return h;
}

/* ---- verification -------------------------------------------------------- */

/* Reference output frames [m0, m0+len) into y (interleaved), from the
 * signal's definition (zero before frame 0 and after play_frames). */
static void reference(const float *h, uint32_t taps, long m0, size_t len, double *y, float *xs)
{
	/* xs: CH runs of len + taps - 1 input frames, so the inner loop is one
	 * contiguous dot product; four partial sums keep the adds pipelined. */
	size_t span = len + taps - 1;
	for (int c = 0; c < CH; c++)
		for (size_t i = 0; i < span; i++) {
			long n = m0 - (long)taps + 1 + (long)i;
			xs[c * span + i] = n >= 0 && (size_t)n < play_frames ? signal_at((size_t)n, c) : 0.0f;
		}
	for (int c = 0; c < CH; c++)
		for (size_t m = 0; m < len; m++) {
			const float *x = xs + c * span + m; /* x[taps-1] is frame m0+m */
			double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
			uint32_t k = 0;
			for (; k + 4 <= taps; k += 4) {
				a0 += (double)h[k] * x[taps - 1 - k];
				a1 += (double)h[k + 1] * x[taps - 2 - k];
				a2 += (double)h[k + 2] * x[taps - 3 - k];
				a3 += (double)h[k + 3] * x[taps - 4 - k];
			}
			for (; k < taps; k++)
				a0 += (double)h[k] * x[taps - 1 - k];
			y[m * CH + c] = (a0 + a1) + (a2 + a3);
		}
}

/* The delay d with rec[m] == y[m - d] on a window at recording frame @p w0
 * (>= MAX_DELAY), or -1. */
static long find_delay_at(const float *h, uint32_t taps, size_t nrec, size_t w0)
{
	size_t wl = 512;
	if (w0 + wl > nrec)
		return -1;
	size_t len = MAX_DELAY + wl;
	double *y = malloc(sizeof(double) * len * CH);
	float *xs = malloc(sizeof(float) * (len + taps) * CH);
	CHECK(y && xs);
	reference(h, taps, (long)(w0 - MAX_DELAY), len, y, xs); /* y[i] = frame w0 - MAX_DELAY + i */
	long best = -1;
	for (long d = 0; d < MAX_DELAY && best < 0; d++) {
		double err = 0, ref = 0;
		for (size_t m = 0; m < wl * CH; m++) {
			double r = y[(MAX_DELAY - d) * CH + m];
			err += (rec[w0 * CH + m] - r) * (rec[w0 * CH + m] - r);
			ref += r * r;
		}
		if (ref > 0 && sqrt(err / ref) < TOL)
			best = d;
	}
	free(y);
	free(xs);
	return best;
}

/* The delay on a window half a second in. */
static long find_delay(const float *h, uint32_t taps, size_t nrec)
{
	return find_delay_at(h, taps, nrec, rate / 2 + MAX_DELAY);
}

/* After a bad window at input frame @p s: has the delay stepped (a period
 * change, an auto slack step)? The new delay, from the next window, or -1. */
static long delay_step(const float *h, uint32_t taps, size_t win, size_t nrec, size_t s, long d)
{
	size_t w0 = s + win + (size_t)d + win / 2; /* recording frame in the next window */
	if (w0 < MAX_DELAY || w0 + 512 > nrec)
		return -1;
	long nd = find_delay_at(h, taps, nrec, w0);
	return nd >= 0 && nd != d ? nd : -1;
}

/* Every window of @p win frames of output, [d, d + play_frames): at one
 * constant delay, or at a new one after a step. Glitches: runs of bad
 * windows (a step costs one). */
static int verify_windows(const float *h, uint32_t taps, size_t win, size_t nrec, long d)
{
	size_t steps = 0, glitches = 0;
	int prev_bad = 0;
	double *y = malloc(sizeof(double) * win * CH);
	float *xs = malloc(sizeof(float) * (win + taps) * CH);
	CHECK(y && xs);
	size_t n_win = 0, bad = 0;
	char where[256] = "";
	double worst = 0;
	for (size_t s = 0; s < play_frames; s += win, n_win++) {
		size_t len = play_frames - s < win ? play_frames - s : win;
		if (s + (size_t)d + len > nrec) {
			bad++; /* not recorded: counts as a mismatch */
			continue;
		}
		reference(h, taps, (long)s, len, y, xs);
		double err = 0, ref = 0;
		const float *r = rec + (s + (size_t)d) * CH;
		for (size_t i = 0; i < len * CH; i++) {
			err += (r[i] - y[i]) * (r[i] - y[i]);
			ref += y[i] * y[i];
		}
		double rel = ref > 0 ? sqrt(err / ref) : sqrt(err);
		worst = rel > worst ? rel : worst;
		int is_bad = !(rel < TOL);
		glitches += is_bad && !prev_bad;
		prev_bad = is_bad;
		if (is_bad && bad++ < 16) {
			size_t u = strlen(where);
			snprintf(where + u, sizeof(where) - u, " %.0f", (double)s / (double)rate);
		}
		long nd = is_bad ? delay_step(h, taps, win, nrec, s, d) : -1;
		if (nd >= 0) {
			printf("delay_step_at_s: %.0f %ld -> %ld\n", (double)s / (double)rate, d, nd);
			d = nd;
			steps++;
		}
	}
	printf("windows: %zu of %.1f s checked, %zu over %.0e, worst rel L2 %.2e\n", n_win,
	       (double)win / (double)rate, bad, TOL, worst);
	printf("delay_steps: %zu\nglitches: %zu\nfinal_delay_frames: %ld\n", steps, glitches, d);
	if (bad)
		printf("mismatch_at_s:%s%s\n", where, bad > 16 ? " ..." : "");
	free(y);
	free(xs);
	return bad ? -1 : 0;
}

/* ---- main ---------------------------------------------------------------- */

static void on_signal(int sig)
{
	interrupted = 1;
}

static int write_taps(const char *path, uint32_t n, uint64_t seed)
{
	float *h = malloc(sizeof(float) * n);
	CHECK(h && n > 0 && n <= MAX_TAPS);
	gf_test_fill_decaying_taps(h, n, &seed);
	FILE *f = fopen(path, "w");
	CHECK(f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%.9g\n", h[i]);
	CHECK(fclose(f) == 0);
	free(h);
	return 0;
}

static void play_and_record(double seconds, const char *client)
{
	play_frames = (size_t)(seconds * (double)rate);
	rec_cap = play_frames + 5 * rate; /* room for the delay and the tail */
	rec = malloc(rec_cap * CH * sizeof(float));
	CHECK(rec);
	/* Touch every page now: page faults in the recorder's callback would
	 * stretch the JACK cycles that gpufir runs in. */
	memset(rec, 0, rec_cap * CH * sizeof(float));
	play_c = open_client("gfsoak_play", play_process, play_port, JackPortIsOutput);
	rec_c = open_client("gfsoak_rec", rec_process, rec_port, JackPortIsInput);
	jack_set_xrun_callback(play_c, on_xrun, NULL);
	CHECK(jack_activate(play_c) == 0 && jack_activate(rec_c) == 0);
	connect_to(client);
	usleep(200000); /* connections take effect */
	atomic_store_explicit(&go, 1, memory_order_release);
	printf("playing: %.0f s\n", seconds);
	fflush(stdout);
	/* Until everything played and two more seconds came back (the delay). */
	while (!interrupted &&
	       (atomic_load(&played) < play_frames || atomic_load(&recorded) < play_frames + 2 * rate) &&
	       atomic_load(&recorded) < rec_cap)
		usleep(100000);
	atomic_store(&go, 0);
	usleep(100000);
	jack_deactivate(play_c);
	jack_deactivate(rec_c);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "taps") == 0)
		return write_taps(argv[2], (uint32_t)strtoul(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
	if (argc < 4 || argc > 5 || strcmp(argv[1], "run") != 0) {
		fprintf(stderr,
			"usage: soak_client taps FILE N SEED | soak_client run SECONDS TAPS [CLIENT]\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	uint32_t taps;
	float *h = read_taps(argv[3], &taps);
	jack_client_t *probe = jack_client_open("gfsoak_probe", JackNoStartServer, NULL);
	if (!probe) {
		fprintf(stderr, "soak_client: no JACK server\n");
		return 1;
	}
	rate = jack_get_sample_rate(probe);
	jack_client_close(probe);
	play_and_record(atof(argv[2]), argc == 5 ? argv[4] : "gpufir");
	size_t nrec = atomic_load(&recorded);
	size_t np = atomic_load(&played);
	printf("played_s: %.1f\nrecorded_s: %.1f\njack_xruns: %u\n",
	       (double)(np < play_frames ? np : play_frames) / (double)rate, (double)nrec / (double)rate,
	       atomic_load(&jack_xruns));
	long d = interrupted ? -1 : find_delay(h, taps, nrec);
	int ok = d >= 0;
	if (ok) {
		printf("delay_frames: %ld\n", d);
		ok = verify_windows(h, taps, rate, nrec, d) == 0;
	} else {
		printf("delay_frames: none (the output is not the filtered input at any delay up to %d)\n",
		       MAX_DELAY);
	}
	printf("result: %s\n", ok ? "match" : "MISMATCH");
	jack_client_close(play_c);
	jack_client_close(rec_c);
	free(rec);
	free(h);
	return ok ? 0 : 1;
}
