/* The daemon's volume, mute and meters (daemon_control.h): the control
 * thread's side of the worker's gain stage, the state file, the status
 * socket's lines. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_control.h"
#include "daemon_internal.h"
#include "log.h"
#include "safe_file.h"
#include "temp_file.h"

#define STATE_MAX_BYTES 4096
#define STATE_RETRY_MS 10000	  /* a failed write is tried again after this */
#define STATUS_LEVEL_CHANNELS 64u /* the status socket lists this many channels at most */

struct gf_dm_volume {
	double db; /* the volume in force (the worker's target) */
	int mute;
	double cfg_db, cfg_limit;   /* the running configuration's, to notice a reload's change */
	char *state_file;	    /* copied: the config may be replaced */
	int dirty;		    /* the state file is behind */
	int64_t first_ms, last_ms;  /* the first and the last change not yet written */
	int64_t retry_ms;	    /* after a failed write: not before */
	int write_failed;	    /* said once, until a write succeeds */
	struct gf_gain_stage *gain; /* the running stream's, or NULL */
	struct gf_gain_reader readers[GF_GAIN_READERS];
	struct gf_dm_levels status_levels; /* the status socket's scratch */
};

static float lin(double db, int mute)
{
	return mute ? 0.0f : (float)pow(10.0, db / 20.0);
}

static void publish(struct gf_dm_volume *v)
{
	if (v->gain)
		gf_gain_stage_set(v->gain, lin(v->db, 0), v->mute);
}

/* ---- the state file ---------------------------------------------------- */

/* A plain decimal number, as state_write writes it: strtod alone would also take hex
 * ("0x10" is 16), "inf" and "nan". @return 0, or -1. */
static int decimal(const char *s, double *x)
{
	char *end;
	if (s[strspn(s, "+-0123456789.eE")] != '\0')
		return -1;
	*x = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

/* "volume_db = X" and "mute = 0|1" lines, '#' comments. @return 0, or -1 (what is wrong in @p why). */
static int state_parse(char *text, double *db, int *mute, char *why, size_t len)
{
	int have_db = 0, have_mute = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char key[32], num[64], rest[2];
		double x;
		if (line[0] == '#' || line[strspn(line, " \t\r")] == '\0')
			continue;
		if (sscanf(line, " %31[a-z_] = %63s %1s", key, num, rest) != 2 || decimal(num, &x) != 0) {
			snprintf(why, len, "cannot read the line \"%.60s\"", line);
			return -1;
		}
		if (strcmp(key, "volume_db") == 0 && isfinite(x) && x >= GF_VOLUME_MIN_DB &&
		    x <= GF_VOLUME_MAX_DB) {
			*db = x;
			have_db = 1;
		} else if (strcmp(key, "mute") == 0 && (x == 0.0 || x == 1.0)) {
			*mute = x == 1.0;
			have_mute = 1;
		} else {
			snprintf(why, len, "%s = %g: unknown or out of range", key, x);
			return -1;
		}
	}
	if (!have_db || !have_mute) {
		snprintf(why, len, "no %s line", have_db ? "mute" : "volume_db");
		return -1;
	}
	return 0;
}

/* Read the state file into @p v. @return 1 if it set the volume, 0 if missing or ignored. */
static int state_read(struct gf_dm_volume *v)
{
	struct gf_errbuf eb = {{0}};
	char *text = NULL, why[160];
	size_t n;
	if (access(v->state_file, F_OK) != 0 && errno == ENOENT) {
		gf_info("state file %s: none yet; volume from the configuration", v->state_file);
		return 0;
	}
	int err = gf_file_read_all(v->state_file, "state file", STATE_MAX_BYTES, &text, &n, &eb);
	if (err) {
		gf_warn("state file: %s; ignored, volume from the configuration",
			eb.msg[0] ? eb.msg : gf_strerror(err));
		return 0;
	}
	double db = 0.0;
	int mute = 0;
	int bad = strlen(text) != n || state_parse(text, &db, &mute, why, sizeof(why)) != 0;
	free(text);
	if (bad) {
		gf_warn("state file %s is corrupt (%s); ignored, volume from the configuration",
			v->state_file, strlen(why) ? why : "a NUL byte");
		return 0;
	}
	v->db = db;
	v->mute = mute;
	return 1;
}

/* Write the state file: beside it, fsync, rename into place, fsync the folder. */
static int state_write(const struct gf_dm_volume *v, struct gf_errbuf *eb)
{
	struct gf_temp_file t = GF_TEMP_FILE_INIT;
	char text[160];
	int n = snprintf(text, sizeof(text),
			 "# gpufir state: the last volume and mute, written by the daemon\nvolume_db = %.2f\n"
			 "mute = %d\n",
			 v->db, v->mute);
	int err = gf_temp_open(&t, v->state_file, GF_TEMP_REGULAR_ONLY, eb);
	if (err)
		return err;
	int dirfd = dup(t.dirfd);
	if (write(t.fd, text, (size_t)n) != n || fsync(t.fd) != 0) {
		gf_errbuf_set(eb, "%s: %s", v->state_file, strerror(errno ? errno : EIO));
		gf_temp_discard(&t);
		if (dirfd >= 0)
			close(dirfd);
		return GF_E_IO;
	}
	err = gf_temp_commit(&t, v->state_file, eb);
	if (dirfd >= 0) {
		if (!err)
			fsync(dirfd); /* the rename itself survives a power loss */
		close(dirfd);
	}
	return err;
}

static void state_flush(struct gf_dm_volume *v)
{
	struct gf_errbuf eb = {{0}};
	if (!v->dirty || !v->state_file)
		return;
	int err = state_write(v, &eb);
	if (err) {
		if (!v->write_failed)
			gf_warn("cannot write the state file (volume and mute): %s; trying again every %d s",
				eb.msg[0] ? eb.msg : gf_strerror(err), STATE_RETRY_MS / 1000);
		v->write_failed = 1;
		v->retry_ms = gf_now_ms() + STATE_RETRY_MS;
		return;
	}
	if (v->write_failed)
		gf_notice("state file %s written again", v->state_file);
	v->write_failed = 0;
	v->dirty = 0;
}

/* ---- the volume -------------------------------------------------------- */

/* Set up from the configuration, then the state file. NULL without memory. */
static struct gf_dm_volume *vol_new(const struct gf_config *c)
{
	struct gf_dm_volume *v = calloc(1, sizeof(*v));
	if (!v || (c->state_file && !(v->state_file = strdup(c->state_file)))) {
		free(v);
		return NULL;
	}
	v->cfg_db = v->db = c->volume_db;
	v->cfg_limit = c->volume_limit_db;
	if (v->state_file && state_read(v) && v->db > v->cfg_limit) {
		gf_notice("state file: volume %.1f dB is above volume_limit_db: %.1f dB", v->db,
			  v->cfg_limit);
		v->db = v->cfg_limit;
	}
	gf_info("volume %.1f dB%s (limit %.1f dB)%s%s", v->db, v->mute ? ", muted" : "", v->cfg_limit,
		v->state_file ? ", state file " : "", v->state_file ? v->state_file : "");
	return v;
}

/* The volume state, made the first time the configuration is there. */
static struct gf_dm_volume *vol_of(struct daemon *d, struct gf_errbuf *eb)
{
	if (!d->vol && d->cfg && !(d->vol = vol_new(d->cfg)))
		gf_errbuf_set(eb, "volume: out of memory");
	else if (!d->vol)
		gf_errbuf_set(eb, "the configuration is not loaded yet");
	return d->vol;
}

static void result(const struct gf_dm_volume *v, struct gf_dm_volume_result *r, int clamped, const char *why)
{
	r->volume_db = v->db;
	r->limit_db = v->cfg_limit;
	r->mute = v->mute;
	r->clamped = clamped;
	snprintf(r->msg, sizeof(r->msg), "volume %.1f dB%s%s", v->db, v->mute ? ", muted" : "", why);
}

/* The volume @p db, clamped, in force; the state file due. */
static void vol_apply(struct gf_dm_volume *v, double db, int mute, struct gf_dm_volume_result *r)
{
	int clamped = 0;
	char why[96] = "";
	if (db > v->cfg_limit) {
		snprintf(why, sizeof(why), " (%.1f dB asked: clamped to volume_limit_db)", db);
		db = v->cfg_limit;
		clamped = 1;
	} else if (db < GF_VOLUME_MIN_DB) {
		snprintf(why, sizeof(why), " (%.1f dB asked: clamped to the floor)", db);
		db = GF_VOLUME_MIN_DB;
		clamped = 1;
	}
	if (db != v->db || mute != v->mute) {
		int64_t now = gf_now_ms();
		if (!v->dirty)
			v->first_ms = now;
		v->dirty = 1;
		v->last_ms = now;
	}
	v->db = db;
	v->mute = mute;
	publish(v);
	result(v, r, clamped, why);
}

int gf_daemon_volume_get(struct daemon *d, struct gf_dm_volume_result *r, struct gf_errbuf *eb)
{
	struct gf_dm_volume *v = vol_of(d, eb);
	if (!v)
		return d->cfg ? GF_E_NOMEM : GF_E_BUSY;
	result(v, r, 0, "");
	return 0;
}

static int change(struct daemon *d, double db, int relative, int mute, struct gf_dm_volume_result *r,
		  struct gf_errbuf *eb)
{
	struct gf_dm_volume *v = vol_of(d, eb);
	if (!v)
		return d->cfg ? GF_E_NOMEM : GF_E_BUSY;
	if (!isfinite(db)) {
		gf_errbuf_set(eb, "volume: %g is not a number of dB", db);
		return GF_E_INVAL;
	}
	vol_apply(v, relative ? v->db + db : db, mute < 0 ? v->mute : mute, r);
	return 0;
}

int gf_daemon_volume_set(struct daemon *d, double db, struct gf_dm_volume_result *r, struct gf_errbuf *eb)
{
	return change(d, db, 0, -1, r, eb);
}

int gf_daemon_volume_adjust(struct daemon *d, double delta_db, struct gf_dm_volume_result *r,
			    struct gf_errbuf *eb)
{
	return change(d, delta_db, 1, -1, r, eb);
}

int gf_daemon_mute_set(struct daemon *d, int mute, struct gf_dm_volume_result *r, struct gf_errbuf *eb)
{
	return change(d, 0.0, 1, mute != 0, r, eb);
}

int gf_daemon_mute_toggle(struct daemon *d, struct gf_dm_volume_result *r, struct gf_errbuf *eb)
{
	struct gf_dm_volume *v = vol_of(d, eb);
	return v ? change(d, 0.0, 1, !v->mute, r, eb) : d->cfg ? GF_E_NOMEM : GF_E_BUSY;
}

/* ---- meters ------------------------------------------------------------ */

static double dbfs(float x)
{
	return x > 0.0f ? 20.0 * log10(x) : -INFINITY;
}

int gf_daemon_levels(struct daemon *d, unsigned reader, struct gf_dm_levels *out, struct gf_errbuf *eb)
{
	out->channels = 0;
	out->interval_s = 0.0;
	out->clipped = 0;
	out->capture_peak = out->storage;
	out->capture_rms = out->storage + GF_GAIN_MAX_CHANNELS;
	out->playback_peak = out->storage + 2 * GF_GAIN_MAX_CHANNELS;
	out->playback_rms = out->storage + 3 * GF_GAIN_MAX_CHANNELS;
	out->clipped_ch = out->raw.clipped_storage;
	if (reader >= GF_GAIN_READERS) {
		gf_errbuf_set(eb, "levels: no reader %u", reader);
		return GF_E_INVAL;
	}
	if (!d->vol || !d->vol->gain) {
		gf_errbuf_set(eb, "levels: no audio stream is running");
		return GF_E_BUSY;
	}
	struct gf_gain_levels *l = &out->raw;
	int err = gf_gain_stage_levels(d->vol->gain, reader, &d->vol->readers[reader], l);
	if (err) {
		gf_errbuf_set(eb, "levels: %s", gf_strerror(err));
		return err;
	}
	out->channels = l->channels;
	out->clipped_ch = l->clipped;
	out->clipped = l->clipped_total;
	uint32_t rate = gf_gain_stage_rate(d->vol->gain);
	out->interval_s = rate ? (double)l->frames / rate : 0.0;
	for (uint32_t c = 0; c < l->channels; c++) {
		out->capture_peak[c] = dbfs(l->capture_peak[c]);
		out->capture_rms[c] = dbfs(l->capture_rms[c]);
		out->playback_peak[c] = dbfs(l->playback_peak[c]);
		out->playback_rms[c] = dbfs(l->playback_rms[c]);
	}
	return 0;
}

const char *gf_daemon_state_file(struct daemon *d, int *updated)
{
	*updated = !d->vol || !d->vol->dirty;
	return d->vol ? d->vol->state_file : NULL;
}

uint64_t gf_daemon_clipped_get(struct daemon *d)
{
	return d->vol && d->vol->gain ? gf_gain_stage_clipped(d->vol->gain) : 0;
}

void gf_daemon_clipped_reset(struct daemon *d)
{
	if (d->vol && d->vol->gain)
		gf_gain_stage_clipped_reset(d->vol->gain);
}

/* ---- the daemon's hooks (daemon_internal.h) ---------------------------- */

int gf_dm_gain_new(struct daemon *d, struct gf_gain_stage **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_dm_volume *v = vol_of(d, eb);
	if (!v)
		return GF_E_NOMEM;
	uint32_t ch, rate;
	gf_chain_gain_shape(d->cfg, gf_reload_channels(d->cfg), gf_reload_out_channels(d->cfg), &ch, &rate);
	int err = gf_gain_stage_new(&v->gain, ch, rate, lin(v->db, 0), v->mute, eb);
	*out = v->gain;
	return err;
}

void gf_dm_gain_release(struct daemon *d, int free_it)
{
	if (!d->vol || !d->vol->gain)
		return;
	if (free_it) /* else a stuck worker or PortAudio call may still run it: kept, never freed */
		gf_gain_stage_free(d->vol->gain);
	d->vol->gain = NULL;
}

/* A reload's configuration: its volume_db, if changed, is a request; a lower limit clamps. */
static void config_check(struct daemon *d, struct gf_dm_volume *v)
{
	const struct gf_config *c = d->cfg;
	if (c->volume_db == v->cfg_db && c->volume_limit_db == v->cfg_limit)
		return;
	int db_changed = c->volume_db != v->cfg_db;
	v->cfg_db = c->volume_db;
	v->cfg_limit = c->volume_limit_db;
	if (!db_changed && v->db <= v->cfg_limit)
		return;
	struct gf_dm_volume_result r;
	vol_apply(v, db_changed ? c->volume_db : v->db, v->mute, &r);
	gf_notice("configuration: %s", r.msg);
}

void gf_dm_volume_tick(struct daemon *d)
{
	struct gf_dm_volume *v = d->vol;
	if (!v)
		return;
	if (d->cfg)
		config_check(d, v);
	int64_t now = gf_now_ms();
	if (v->dirty && now >= v->retry_ms &&
	    (now - v->last_ms >= GF_DM_STATE_DEBOUNCE_MS || now - v->first_ms >= GF_DM_STATE_MAX_DELAY_MS))
		state_flush(v);
}

void gf_dm_volume_free(struct daemon *d, int free_gain)
{
	struct gf_dm_volume *v = d->vol;
	if (!v)
		return;
	state_flush(v);
	gf_dm_gain_release(d, free_gain);
	for (unsigned i = 0; i < GF_GAIN_READERS; i++)
		gf_gain_reader_free(&v->readers[i]);
	free(v->state_file);
	free(v);
	d->vol = NULL;
}

/* One "key: v v v" line of per-channel dBFS values. */
static size_t level_line(char *buf, size_t len, const char *key, const double *x, uint32_t n)
{
	size_t u = (size_t)snprintf(buf, len, "%s:", key);
	for (uint32_t c = 0; c < n && u < len; c++)
		u += (size_t)snprintf(buf + u, len - u, isinf(x[c]) ? " -inf" : " %.1f", x[c]);
	if (u < len)
		u += (size_t)snprintf(buf + u, len - u, "\n");
	return u < len ? u : len;
}

void gf_dm_volume_status(struct daemon *d, char *buf, size_t len)
{
	struct gf_errbuf eb = {{0}};
	struct gf_dm_volume *v = vol_of(d, &eb);
	if (!len || !v) {
		if (len)
			buf[0] = '\0';
		return;
	}
	struct gf_dm_levels *l = &v->status_levels;
	int have = gf_daemon_levels(d, GF_GAIN_READER_STATUS, l, &eb) == 0;
	uint32_t n = have ? l->channels : 0;
	size_t u =
		(size_t)snprintf(buf, len,
				 "volume_db: %.1f\nvolume_limit_db: %.1f\nmute: %d\nclipped_samples: %llu\n"
				 "levels_channels: %u\nlevels_interval_s: %.3f\n",
				 v->db, v->cfg_limit, v->mute, (unsigned long long)(have ? l->clipped : 0), n,
				 have ? l->interval_s : 0.0);
	/* Each side its own channels: a crossover's 2 captured, 4 played. */
	uint32_t nc = have && l->raw.capture_channels ? l->raw.capture_channels : n;
	uint32_t np = have && l->raw.playback_channels ? l->raw.playback_channels : n;
	nc = nc < STATUS_LEVEL_CHANNELS ? nc : STATUS_LEVEL_CHANNELS;
	np = np < STATUS_LEVEL_CHANNELS ? np : STATUS_LEVEL_CHANNELS;
	const char *keys[4] = {"capture_peak_dbfs", "capture_rms_dbfs", "playback_peak_dbfs",
			       "playback_rms_dbfs"};
	const double *vals[4] = {l->capture_peak, l->capture_rms, l->playback_peak, l->playback_rms};
	const uint32_t count[4] = {nc, nc, np, np};
	for (int k = 0; k < 4 && have && u < len; k++)
		u += level_line(buf + u, len - u, keys[k], vals[k], count[k]);
}
