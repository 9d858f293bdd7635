/* The level history behind CamillaDSP's "since" commands (docs/api.md,
 * "Levels over time"): every level reading the API makes (a command, a
 * subscription's push, the history's own poll) covers the audio since the
 * previous one, so the readings tile the audio without a gap. They are summed
 * into slots of about HIST_SLOT_MS (the peak, and the energy for the RMS),
 * the last HIST_SLOTS of them kept: "the last N seconds" is the slots that
 * end within them, "since last" the slots after the ones a client's previous
 * call took (its mark), "since start" a running peak over every reading.
 * Control thread only; allocated once, in gf_api_new. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"

#define HIST_SLOTS 256
#define HIST_SLOT_MS 100
/* After a "since N s" command the history reads levels every slot for this long, so that the
 * next one's seconds are the audio's, not one long reading's. */
#define HIST_ARMED_MS 20000
#define HIST_MARKS (2 * GF_API_MAX_CLIENTS) /* clients of both transports */

enum side { CAPTURE, PLAYBACK };
enum set { CAP_PEAK, CAP_RMS, PB_PEAK, PB_RMS, N_SETS };

struct slot {
	uint64_t seq; /* 0: empty */
	int64_t first_ms, last_ms;
	double dur_s;			 /* audio in the slot */
	float peak[2][GF_API_MAX_CH];	 /* linear */
	double energy[2][GF_API_MAX_CH]; /* mean square x seconds */
};

/* A client's "since last": the newest slot each of its four readings took. */
struct mark {
	void *client; /* NULL: free */
	uint64_t seq[N_SETS];
};

struct gf_api_hist {
	struct slot slot[HIST_SLOTS];
	uint64_t newest; /* the newest slot's seq (its index: seq % HIST_SLOTS); 0: none */
	int sealed;	 /* the newest slot was taken by a "since last": the next reading opens one */
	uint32_t n[2];	 /* channels: a change (another stream) starts the history again */
	float start_peak[2][GF_API_MAX_CH];
	int64_t armed_until_ms, next_poll_ms;
	int64_t plain_ms; /* the previous plain reading (gf_api_levels_plain) */
	struct mark marks[HIST_MARKS];
	unsigned next_mark; /* the one to reuse when all are taken */
};

int gf_api_levels_new(struct gf_api *a)
{
	return (a->hist = calloc(1, sizeof(*a->hist))) ? 0 : GF_E_NOMEM;
}

void gf_api_levels_free(struct gf_api_hist *h)
{
	free(h);
}

static double lin(double db)
{
	return db <= -1000.0 ? 0.0 : pow(10.0, db / 20.0);
}

static double dbfs(double x)
{
	return x > 0.0 ? 20.0 * log10(x) : -1000.0; /* -1000: CamillaDSP's silence */
}

static void restart(struct gf_api_hist *h, const struct gf_api_levels *lv)
{
	memset(h->slot, 0, sizeof(h->slot));
	memset(h->start_peak, 0, sizeof(h->start_peak)); /* seqs go on: the marks stay in order */
	h->n[CAPTURE] = lv->n_capture;
	h->n[PLAYBACK] = lv->n_playback;
}

static struct slot *slot_for(struct gf_api_hist *h, int64_t now_ms)
{
	struct slot *s = &h->slot[h->newest % HIST_SLOTS];
	if (h->newest && s->seq == h->newest && !h->sealed && now_ms - s->first_ms < HIST_SLOT_MS)
		return s;
	s = &h->slot[++h->newest % HIST_SLOTS];
	memset(s, 0, sizeof(*s));
	s->seq = h->newest;
	s->first_ms = now_ms;
	h->sealed = 0;
	return s;
}

int gf_api_levels_record(struct gf_api *a, const struct gf_api_levels *lv)
{
	struct gf_api_hist *h = a->hist;
	if (!h)
		return 0;
	if (lv->n_capture != h->n[CAPTURE] || lv->n_playback != h->n[PLAYBACK])
		restart(h, lv);
	if (!(lv->interval_s > 0.0))
		return 0; /* no audio since the previous reading */
	struct slot *s = slot_for(h, a->now_ms);
	s->last_ms = a->now_ms;
	s->dur_s += lv->interval_s;
	const double *peak[2] = {lv->capture_peak, lv->playback_peak};
	const double *rms[2] = {lv->capture_rms, lv->playback_rms};
	for (int side = 0; side < 2; side++)
		for (uint32_t c = 0; c < h->n[side] && c < GF_API_MAX_CH; c++) {
			float p = (float)lin(peak[side][c]);
			double r = lin(rms[side][c]);
			s->peak[side][c] = fmaxf(s->peak[side][c], p);
			s->energy[side][c] += r * r * lv->interval_s;
			h->start_peak[side][c] = fmaxf(h->start_peak[side][c], p);
		}
	return 0;
}

/* The levels over the slots after seq @p after that end after @p from_ms; no channels where
 * they hold no audio (CamillaDSP's empty list: nothing new). */
static void combine(const struct gf_api_hist *h, uint64_t after, int64_t from_ms, struct gf_api_levels *lv)
{
	double peak[2][GF_API_MAX_CH] = {{0}}, energy[2][GF_API_MAX_CH] = {{0}}, dur = 0.0;
	for (unsigned i = 0; i < HIST_SLOTS; i++) {
		const struct slot *s = &h->slot[i];
		if (!s->seq || s->seq <= after || s->last_ms <= from_ms || !(s->dur_s > 0.0))
			continue;
		dur += s->dur_s;
		for (int side = 0; side < 2; side++)
			for (uint32_t c = 0; c < h->n[side] && c < GF_API_MAX_CH; c++) {
				peak[side][c] = fmax(peak[side][c], s->peak[side][c]);
				energy[side][c] += s->energy[side][c];
			}
	}
	memset(lv, 0, sizeof(*lv));
	lv->interval_s = dur;
	if (!(dur > 0.0))
		return;
	lv->n_capture = h->n[CAPTURE] < GF_API_MAX_CH ? h->n[CAPTURE] : GF_API_MAX_CH;
	lv->n_playback = h->n[PLAYBACK] < GF_API_MAX_CH ? h->n[PLAYBACK] : GF_API_MAX_CH;
	double *out_peak[2] = {lv->capture_peak, lv->playback_peak};
	double *out_rms[2] = {lv->capture_rms, lv->playback_rms};
	uint32_t n[2] = {lv->n_capture, lv->n_playback};
	for (int side = 0; side < 2; side++)
		for (uint32_t c = 0; c < n[side]; c++) {
			out_peak[side][c] = dbfs(peak[side][c]);
			out_rms[side][c] = dbfs(sqrt(energy[side][c] / dur));
		}
}

int gf_api_levels_plain(struct gf_api *a, struct gf_api_levels *lv, struct gf_errbuf *eb)
{
	struct gf_api_hist *h = a->hist;
	int err = gf_api_levels_read(a, lv, eb);
	if (err || !h)
		return err;
	int64_t since = h->plain_ms;
	h->plain_ms = a->now_ms;
	if (a->now_ms >= h->armed_until_ms)
		return 0; /* no polls: the fresh reading is the audio since the previous one */
	/* The polls took the audio since the previous plain reading: the slots hold it (those that
	 * end after it: up to one slot of audio before it too). */
	struct gf_api_levels sum;
	combine(h, 0, since, &sum);
	if (sum.interval_s > 0.0)
		*lv = sum;
	return 0;
}

/* One set of @p lv as a JSON list, one value per channel. */
static json_t *set_json(const struct gf_api_levels *lv, enum set k)
{
	const double *v[N_SETS] = {lv->capture_peak, lv->capture_rms, lv->playback_peak, lv->playback_rms};
	uint32_t n = k < PB_PEAK ? lv->n_capture : lv->n_playback;
	json_t *arr = json_array();
	for (uint32_t c = 0; arr && c < n; c++)
		json_array_append_new(arr, json_real(v[k][c]));
	return arr;
}

/* CamillaDSP's combined object, set k taken from lv[k]. */
static json_t *all_json(const struct gf_api_levels *lv[N_SETS])
{
	static const char *const keys[N_SETS] = {"capture_peak", "capture_rms", "playback_peak",
						 "playback_rms"};
	json_t *o = json_object();
	for (int k = 0; o && k < N_SETS; k++)
		json_object_set_new(o, keys[k], set_json(lv[k], (enum set)k));
	return o;
}

/* The set a single command reads, by its name (GetCaptureSignalPeakSince, ...). */
static enum set set_of(const char *name)
{
	int rms = strstr(name, "Rms") != NULL;
	return strstr(name, "Capture") ? (rms ? CAP_RMS : CAP_PEAK) : (rms ? PB_RMS : PB_PEAK);
}

/* A fresh reading first, so that the answer reaches the audio of this moment. */
static int read_now(struct gf_api_req *r, struct gf_errbuf *eb)
{
	struct gf_api_levels lv;
	return gf_api_levels_read(r->a, &lv, eb);
}

/* {"GetSignalLevelsSince": seconds} and the four single lists of the same. */
static int c_since(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	double secs = json_number_value(r->arg);
	if (!(secs > 0.0 && secs <= 1e6)) {
		gf_errbuf_set(eb, "%s takes a number of seconds above 0", r->name);
		return GF_E_INVAL;
	}
	int err = read_now(r, eb);
	if (err)
		return err;
	struct gf_api_hist *h = r->a->hist;
	h->armed_until_ms = r->a->now_ms + HIST_ARMED_MS;
	struct gf_api_levels lv;
	combine(h, 0, r->a->now_ms - (int64_t)(secs * 1000.0), &lv);
	const struct gf_api_levels *all[N_SETS] = {&lv, &lv, &lv, &lv};
	*v = strcmp(r->name, "GetSignalLevelsSince") == 0 ? all_json(all) : set_json(&lv, set_of(r->name));
	return 0;
}

/* The client's mark; a new one starts at the newest slot, so its first call covers the
 * reading it makes (the audio since the API's previous reading). */
static struct mark *mark_of(struct gf_api_hist *h, void *client)
{
	for (unsigned i = 0; i < HIST_MARKS; i++)
		if (h->marks[i].client == client)
			return &h->marks[i];
	struct mark *m = NULL;
	for (unsigned i = 0; i < HIST_MARKS && !m; i++)
		if (!h->marks[i].client)
			m = &h->marks[i];
	if (!m) /* more clients than both transports admit: cannot be, but stay bounded */
		m = &h->marks[h->next_mark++ % HIST_MARKS];
	m->client = client;
	for (int k = 0; k < N_SETS; k++)
		m->seq[k] = h->newest;
	h->sealed = 1;
	return m;
}

void gf_api_levels_client_gone(struct gf_api *a, void *client)
{
	for (unsigned i = 0; a->hist && i < HIST_MARKS; i++)
		if (a->hist->marks[i].client == client)
			a->hist->marks[i].client = NULL;
}

/* "GetSignalLevelsSinceLast" and the four single lists: each set since this client last read it. */
static int c_since_last(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_hist *h = r->a->hist;
	struct mark *m = mark_of(h, r->client);
	int err = read_now(r, eb);
	if (err)
		return err;
	int all = strcmp(r->name, "GetSignalLevelsSinceLast") == 0;
	struct gf_api_levels lv[N_SETS] = {{0}};
	const struct gf_api_levels *of[N_SETS];
	for (int k = 0; k < N_SETS; k++) {
		int used = all || set_of(r->name) == (enum set)k;
		if (used)
			combine(h, m->seq[k], INT64_MIN, &lv[k]);
		of[k] = &lv[used ? k : 0];
		if (used)
			m->seq[k] = h->newest;
	}
	h->sealed = 1; /* what comes next is after this mark */
	*v = all ? all_json(of) : set_json(of[set_of(r->name)], set_of(r->name));
	return 0;
}

/* {"playback": [...], "capture": [...]}: the peaks since the stream started or the last reset. */
static int c_peaks_since_start(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int err = read_now(r, eb);
	if (err)
		return err;
	const struct gf_api_hist *h = r->a->hist;
	json_t *side[2] = {json_array(), json_array()};
	for (int s = 0; s < 2; s++)
		for (uint32_t c = 0; side[s] && c < h->n[s] && c < GF_API_MAX_CH; c++)
			json_array_append_new(side[s], json_real(dbfs(h->start_peak[s][c])));
	*v = json_pack("{s:o,s:o}", "playback", side[PLAYBACK] ? side[PLAYBACK] : json_null(), "capture",
		       side[CAPTURE] ? side[CAPTURE] : json_null());
	return *v ? 0 : GF_E_NOMEM;
}

/* For every client, as CamillaDSP's. */
static int c_reset_peaks(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int err = read_now(r, eb); /* what was metered before the reset is not counted after it */
	if (!err)
		memset(r->a->hist->start_peak, 0, sizeof(r->a->hist->start_peak));
	return err;
}

int gf_api_levels_poll(struct gf_api *a)
{
	struct gf_api_hist *h = a->hist;
	if (!h || a->now_ms >= h->armed_until_ms)
		return -1;
	if (a->now_ms >= h->next_poll_ms) {
		struct gf_api_levels lv;
		struct gf_errbuf eb = {{0}};
		gf_api_levels_read(a, &lv, &eb); /* no stream now: nothing to record, and no one to tell */
		h->next_poll_ms = a->now_ms + HIST_SLOT_MS;
	}
	return (int)(h->next_poll_ms - a->now_ms);
}

static const struct gf_api_cmd cmds[] = {
	{"GetCaptureSignalPeakSince", GF_ARG_NUMBER, c_since, GF_CMD_PLAIN},
	{"GetCaptureSignalRmsSince", GF_ARG_NUMBER, c_since, GF_CMD_PLAIN},
	{"GetPlaybackSignalPeakSince", GF_ARG_NUMBER, c_since, GF_CMD_PLAIN},
	{"GetPlaybackSignalRmsSince", GF_ARG_NUMBER, c_since, GF_CMD_PLAIN},
	{"GetSignalLevelsSince", GF_ARG_NUMBER, c_since, GF_CMD_PLAIN},
	{"GetCaptureSignalPeakSinceLast", GF_ARG_NONE, c_since_last, GF_CMD_PLAIN},
	{"GetCaptureSignalRmsSinceLast", GF_ARG_NONE, c_since_last, GF_CMD_PLAIN},
	{"GetPlaybackSignalPeakSinceLast", GF_ARG_NONE, c_since_last, GF_CMD_PLAIN},
	{"GetPlaybackSignalRmsSinceLast", GF_ARG_NONE, c_since_last, GF_CMD_PLAIN},
	{"GetSignalLevelsSinceLast", GF_ARG_NONE, c_since_last, GF_CMD_PLAIN},
	{"GetSignalPeaksSinceStart", GF_ARG_NONE, c_peaks_since_start, GF_CMD_PLAIN},
	{"ResetSignalPeaksSinceStart", GF_ARG_NONE, c_reset_peaks, GF_CMD_PLAIN},
};

const struct gf_api_cmd_table gf_api_level_cmds = {cmds, sizeof(cmds) / sizeof(cmds[0])};
