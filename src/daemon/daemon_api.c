/* The daemon's side of the control API (src/api, docs/api.md): the ops table
 * the protocol calls, filled from the daemon's state, and the sockets' place
 * in the control loop. Everything runs on the control thread. SetConfig,
 * PatchConfig and Reload become reloads on the build thread, one at a time:
 * a request waits here while another build runs, and its reply goes out when
 * reload_done() reports the outcome, so the loop never waits for a build.
 *
 * Volume, mute, levels and clipped samples are daemon_control.h's: the worker's
 * gain stage ramps to the volume set here and meters what it plays. */
#include <libconfig.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_control.h"
#include "daemon_internal.h"
#include "log.h"

/* A socket move waits this long at most for the requester's reply to be written. */
#define API_MOVE_WAIT_MS 1000

static int probe_unix(const struct daemon *d, const struct gf_config *c, struct gf_errbuf *eb);

/* A config request waiting for its build. */
enum api_req { REQ_NONE, REQ_RELOAD, REQ_TEXT };

struct gf_dm_api {
	struct gf_api *proto;
	struct gf_api_server *srv;
	char path[512], address[64]; /* what srv listens on */
	int port;
	char origins[4608]; /* its control_allowed_origins, one after another, each ended by a space */
	struct gf_dm_levels meters; /* GetSignalLevels' reading (56 KB: here, not on the stack) */
	int wait_ms;		    /* the server's wish for the next poll timeout (-1: none) */
	int64_t next_check_ms;	    /* is the socket file still there? (as gf_dm_status_recheck) */
	char key_file[512];	    /* the control_key_file the key was read for ("": the default) */
	int key_read, has_key;
	int64_t move_due_ms; /* a move waits for the requester's reply until then (0: none) */
	/* the request waiting for a build (REQ_*), and the one whose build runs */
	enum api_req waiting;
	uint64_t waiting_token, running_token;
	char *waiting_text;
	/* GetPreviousConfig: the text of the config before the running one */
	const struct gf_config *seen;
	char *seen_text, *prev_text;
	char stop_text[700]; /* GetStopReason's message */
};

/* ---- ops: status -------------------------------------------------------- */

static const char *state_of(const struct daemon *d)
{
	if (!d->engine || d->state == D_STARTING)
		return "Starting";
	if (d->state == D_LOST)
		return "Inactive";
	return d->healthy ? "Running" : "Stalled";
}

/* CamillaDSP's StopReason: a lost device or server is its CaptureError (gpufir cannot tell which
 * side went), gpufir's words in the message. */
static void stop_reason(struct daemon *d, struct gf_api_status *st)
{
	struct gf_dm_api *a = d->api;
	st->stop_reason = d->state == D_LOST ? "CaptureError" : "None";
	if (d->state != D_LOST)
		return;
	snprintf(a->stop_text, sizeof(a->stop_text), "audio %s lost: %s",
		 d->server_lost ? "server" : "device", d->lost_reason);
	st->stop_text = a->stop_text;
}

/* ---- ops: the live controls of the suppressor and the neural stage (daemon_suppress.c) -- */

static int stage_get(void *ctx, enum gf_api_stage_id id, struct gf_api_stage *out, struct gf_errbuf *eb)
{
	return gf_daemon_stage_get(ctx, id, out, eb);
}

static int stage_set(void *ctx, enum gf_api_stage_id id, const struct gf_api_stage *q,
		     struct gf_api_stage *out, struct gf_errbuf *eb)
{
	return gf_daemon_stage_set(ctx, id, q, out, eb);
}

static int op_status(void *ctx, struct gf_api_status *st)
{
	struct daemon *d = ctx;
	const struct gf_live_stats *s = &d->ls;
	st->state = state_of(d);
	st->state_text = gf_dm_state_name(d);
	stop_reason(d, st);
	st->state_file = gf_daemon_state_file(d, &st->state_file_updated);
	st->pid = (long)getpid();
	st->uptime_s = (gf_now_ms() - d->t0_ms) / 1000.0;
	st->last_reload = d->last_reload[0] ? d->last_reload : NULL;
	st->reloads = d->reloads;
	st->reload_failures = d->reload_failures;
	if (!d->cfg)
		return 0;
	st->config_path = d->cfg->path;
	st->capture_device = d->cfg->input.device;
	st->playback_device = d->cfg->output.device;
	st->filters = (const char *const *)d->cfg->chain;
	st->n_filters = d->cfg->n_chain;
	st->sample_rate = d->cfg->sample_rate;
	st->channels = gf_reload_channels(d->cfg);
	st->block_frames = d->cfg->block_frames;
	st->volume_min_db = GF_VOLUME_MIN_DB;
	st->volume_max_db = d->cfg->volume_limit_db;
	struct gf_errbuf why = {{0}};
	for (int id = 0; id < GF_API_STAGES; id++)
		gf_daemon_stage_get(d, id, &st->stages[id], &why); /* the config is loaded: it answers */
	if (!d->engine)
		return 0;
	struct gf_engine_stats es = {0};
	gf_engine_get_stats(d->engine, &es);
	st->backend = gf_engine_backend_name(d->engine);
	st->algo = gf_engine_algo_name(d->engine);
	st->engine_device = gf_engine_describe(d->engine);
	st->taps = gf_engine_taps(d->engine);
	st->capture_rate = d->live ? (s->sample_rate ? s->sample_rate : d->cfg->sample_rate) : 0;
	st->latency_frames = s->latency_frames;
	st->buffer_level = d->live && s->margin_frames_min != INT32_MAX ? s->margin_frames_min : -1;
	double period_us = d->cfg->sample_rate ? 1e6 * d->cfg->block_frames / d->cfg->sample_rate : 0.0;
	st->processing_load = period_us > 0 ? 100.0 * s->block_us_median / period_us : 0.0;
	st->block_us_p99 = s->block_us_p99;
	st->signal_peak = s->peak;
	st->rate_adjust = d->live && s->resampling ? s->clock_ratio : 1.0;
	st->blocks = s->blocks;
	st->clipped = d->live ? gf_daemon_clipped_get(d) : s->clipped; /* after the volume */
	st->xruns = s->input_overflows + s->output_underflows + s->output_overflows;
	st->device_xruns = s->device_xruns;
	st->late_blocks = s->late_blocks;
	st->muted_blocks = es.nonfinite_blocks;
	st->engine_errors = es.errors;
	st->swaps = es.swaps;
	return 0;
}

/* ---- ops: config ---------------------------------------------------------- */

/* Keep the text of the config the running one replaced (d->cfg changes on reloads and restarts). */
static void track_config(struct daemon *d, struct gf_dm_api *a)
{
	if (d->cfg == a->seen)
		return;
	char *now = d->cfg && d->cfg->text ? strdup(d->cfg->text) : NULL;
	if (a->seen) {
		free(a->prev_text);
		a->prev_text = a->seen_text;
	} else {
		free(a->seen_text);
	}
	a->seen_text = now;
	a->seen = d->cfg;
}

static int op_config_text(void *ctx, int previous, const char **text, struct gf_errbuf *eb)
{
	struct daemon *d = ctx;
	track_config(d, d->api);
	*text = previous ? d->api->prev_text : d->cfg ? d->cfg->text : NULL;
	return 0;
}

/* The path a config text is loaded as: the running config's file (its folder resolves relative paths). */
static int text_path(const struct daemon *d, const char **path, struct gf_errbuf *eb)
{
	*path = d->o->src.path;
	if (*path)
		return 0;
	gf_errbuf_set(eb, "the daemon runs the built-in default config: a config text needs a config file "
			  "(gpufir --live -c FILE), whose folder its relative paths resolve against");
	return GF_E_UNSUPPORTED;
}

/* A guest's config (docs/api.md, "What a client may change") is held to the file on disk. */
static int load_guest(const char *path, const char *text, struct gf_config **c, struct gf_errbuf *eb)
{
	struct gf_config *disk = NULL;
	struct gf_errbuf why = {{0}};
	int err = gf_config_load(path, &disk, &why);
	if (err)
		gf_errbuf_set(eb,
			      "the config file does not load (%s): without it there is nothing to hold a "
			      "client's config to; only the owner may send one",
			      why.msg);
	else
		err = gf_config_load_text_guest(path, text, disk, c, eb);
	gf_config_free(disk);
	return err;
}

/* ValidateConfig's and SetConfig's check: parsed and validated as a whole, the caller's policy,
 * and sockets it moves bound and let go. Nothing changes. */
static int check_text(struct daemon *d, const char *text, struct gf_errbuf *eb)
{
	const char *path;
	struct gf_config *c = NULL;
	int err = text_path(d, &path, eb);
	if (!err)
		err = gf_api_caller_is_owner(d->api->proto) ? gf_config_load_text(path, text, &c, eb)
							    : load_guest(path, text, &c, eb);
	if (!err)
		err = probe_unix(d, c, eb);
	if (!err)
		err = gf_dm_status_probe(d, c, eb);
	gf_config_free(c);
	return err;
}

static int op_validate(void *ctx, const char *text, struct gf_errbuf *eb)
{
	return check_text(ctx, text, eb);
}

/* Queue a request for its build (one waits at a time). */
static int request(struct daemon *d, enum api_req kind, const char *text, uint64_t token,
		   struct gf_errbuf *eb)
{
	struct gf_dm_api *a = d->api;
	if (a->waiting != REQ_NONE) {
		gf_errbuf_set(
			eb,
			"another SetConfig, PatchConfig or Reload is waiting; try again when it is answered");
		return GF_E_BUSY;
	}
	if (text && !(a->waiting_text = strdup(text)))
		return GF_E_NOMEM;
	a->waiting = kind;
	a->waiting_token = token;
	return GF_API_PENDING;
}

static int op_set_config(void *ctx, const char *text, uint64_t token, struct gf_errbuf *eb)
{
	/* Parsed and validated here first: a text that cannot be a config is refused at once. */
	int err = check_text(ctx, text, eb);
	return err ? err : request(ctx, REQ_TEXT, text, token, eb);
}

/* PatchConfig: the running text, its settings @p keys removed and @p settings added, as SetConfig. */
static int op_patch_config(void *ctx, const char *settings, const char *const *keys, uint32_t n,
			   uint64_t token, struct gf_errbuf *eb)
{
	struct daemon *d = ctx;
	if (!d->cfg || !d->cfg->text) {
		gf_errbuf_set(eb, "no running config to patch yet");
		return GF_E_BUSY;
	}
	config_t cfg;
	struct gf_errbuf why;
	/* @include resolves as when the file was read, through the same checks */
	int perr = gf_config_parse_text(&cfg, d->cfg->text, d->cfg->path, &why);
	if (perr) {
		gf_errbuf_set(eb, "the running config's text does not parse alone (%s); use SetConfig",
			      why.msg);
		return perr;
	}
	config_setting_t *root = config_root_setting(&cfg);
	for (uint32_t i = 0; i < n; i++)
		config_setting_remove(root, keys[i]);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err = GF_E_NOMEM;
	if (f) {
		config_write(&cfg, f);
		fputs(settings, f);
		err = fclose(f) == 0 ? 0 : GF_E_NOMEM;
	}
	config_destroy(&cfg);
	if (!err)
		err = op_set_config(ctx, text, token, eb);
	free(text);
	return err;
}

static int op_reload(void *ctx, uint64_t token, struct gf_errbuf *eb)
{
	return request(ctx, REQ_RELOAD, NULL, token, eb);
}

/* ---- ops: volume, mute, levels, clipped samples (daemon_control.h) ------------ */

/* The volume and the mute, read together; either pointer may be NULL. */
static int volume_read(void *ctx, double *db, int *mute, struct gf_errbuf *eb)
{
	struct gf_dm_volume_result r;
	int err = gf_daemon_volume_get(ctx, &r, eb);
	if (err)
		return err;
	if (db)
		*db = r.volume_db;
	if (mute)
		*mute = r.mute;
	return 0;
}

static int vol_get(void *ctx, double *db, struct gf_errbuf *eb)
{
	return volume_read(ctx, db, NULL, eb);
}

static int vol_set(void *ctx, double db, struct gf_errbuf *eb)
{
	struct gf_dm_volume_result r;
	int err = gf_daemon_volume_set(ctx, db, &r, eb);
	if (!err && r.clamped)
		gf_info("control API: %s", r.msg);
	return err;
}

static int mute_get(void *ctx, int *mute, struct gf_errbuf *eb)
{
	return volume_read(ctx, NULL, mute, eb);
}

static int mute_set(void *ctx, int mute, struct gf_errbuf *eb)
{
	struct gf_dm_volume_result r;
	return gf_daemon_mute_set(ctx, mute, &r, eb);
}

static int reset_clipped(void *ctx, struct gf_errbuf *eb)
{
	(void)eb;
	gf_daemon_clipped_reset(ctx);
	return 0;
}

/* The open stream's audio system lists them: without a stream there is none to ask (opening one
 * here could block the loop on a JACK server or a device). */
static int devices(void *ctx, int playback, struct gf_api_device *out, uint32_t max, uint32_t *n,
		   struct gf_errbuf *eb)
{
	struct daemon *d = ctx;
	struct gf_live_device dev[GF_API_MAX_DEVICES];
	if (!d->live) {
		gf_errbuf_set(eb,
			      "no audio stream is open (state %s): the device list comes from the "
			      "running stream's audio system; `gpufir --list-devices` scans it",
			      gf_dm_state_name(d));
		return GF_E_AUDIO;
	}
	*n = gf_live_devices(d->live, playback, dev, max < GF_API_MAX_DEVICES ? max : GF_API_MAX_DEVICES);
	for (uint32_t i = 0; i < *n && i < max && i < GF_API_MAX_DEVICES; i++) {
		out[i] = (struct gf_api_device){
			.channels = dev[i].channels, .rate = dev[i].rate, .is_default = dev[i].is_default};
		memcpy(out[i].name, dev[i].name, sizeof(out[i].name));
		memcpy(out[i].host_api, dev[i].host_api, sizeof(out[i].host_api));
	}
	return 0;
}

/* Drawn on the build thread with the filters it shows (reload.c): nothing to compute here. */
static const char *response_svg(void *ctx, size_t *len)
{
	struct daemon *d = ctx;
	*len = d->plot_len;
	return d->plot_svg;
}

/* dBFS for JSON, which has no infinity: silence is CamillaDSP's -1000. */
static double json_dbfs(double db)
{
	return isfinite(db) ? db : -1000.0;
}

static int levels(void *ctx, struct gf_api_levels *lv, struct gf_errbuf *eb)
{
	struct daemon *d = ctx;
	struct gf_dm_levels *m = &d->api->meters;
	int err = gf_daemon_levels(d, GF_GAIN_READER_API, m, eb);
	if (err)
		return err;
	lv->interval_s = m->interval_s;
	/* Each side its own channels: a mixer's N inputs, M outputs. */
	lv->n_capture = m->raw.capture_channels < GF_API_MAX_CH ? m->raw.capture_channels : GF_API_MAX_CH;
	lv->n_playback = m->raw.playback_channels < GF_API_MAX_CH ? m->raw.playback_channels : GF_API_MAX_CH;
	for (uint32_t c = 0; c < lv->n_capture; c++) {
		lv->capture_peak[c] = json_dbfs(m->capture_peak[c]);
		lv->capture_rms[c] = json_dbfs(m->capture_rms[c]);
	}
	for (uint32_t c = 0; c < lv->n_playback; c++) {
		lv->playback_peak[c] = json_dbfs(m->playback_peak[c]);
		lv->playback_rms[c] = json_dbfs(m->playback_rms[c]);
	}
	return 0;
}

/* ---- the loop's side ------------------------------------------------------------ */

/* The Unix socket: control_socket, else RuntimeDirectory's "control", else none. */
static int unix_path(const struct gf_config *c, char *path, size_t len)
{
	const char *rt = getenv("RUNTIME_DIRECTORY");
	if (c->control_socket)
		snprintf(path, len, "%s", c->control_socket);
	else if (rt && *rt && !strchr(rt, ':'))
		snprintf(path, len, "%s/control", rt);
	else
		path[0] = '\0';
	return path[0] != '\0';
}

/* Listen at @p path (none: "") and on @p port; the WebSocket is dropped, and said so, where TCP
 * cannot be had (the service's sandbox, a port in use) and the Unix socket can serve alone. */
static int server_bind(struct gf_dm_api *a, const struct gf_config *c, const char *path, const char *addr,
		       int *port, struct gf_errbuf *eb)
{
	struct gf_api_server_params p = {.unix_path = path[0] ? path : NULL,
					 .address = addr,
					 .port = *port,
					 .allowed_origins = (const char *const *)c->control_allowed_origins,
					 .n_allowed_origins = c->n_control_allowed_origins};
	int err = gf_api_server_new(&a->srv, a->proto, &p, eb);
	if (err && *port && p.unix_path) {
		gf_warn("no control API WebSocket: %s", eb->msg);
		p.port = *port = 0;
		err = gf_api_server_new(&a->srv, a->proto, &p, eb);
	}
	return err;
}

/* A move drops every client: it waits until the requester's reply is written (a reload that
 * moves the sockets follows the config before it answers), at most API_MOVE_WAIT_MS. */
static int move_now(struct gf_dm_api *a)
{
	int64_t now = gf_now_ms();
	if (!a->move_due_ms)
		a->move_due_ms = now + API_MOVE_WAIT_MS;
	if ((a->running_token || gf_api_server_unsent(a->srv)) && now < a->move_due_ms)
		return 0;
	a->move_due_ms = 0;
	return 1;
}

static void server_log(const struct gf_dm_api *a)
{
	if (a->path[0])
		gf_info("control API: %s", a->path);
	int wide = strcmp(a->address, "127.0.0.1") && strcmp(a->address, "::1");
	if (a->port)
		gf_info("control API WebSocket: ws://%s:%d/%s", a->address, a->port,
			wide ? " (not loopback: reachable from the network; clients must Authenticate)" : "");
	if (a->port && wide && !a->has_key)
		gf_warn("control API WebSocket beyond loopback without a control key: no client can "
			"Authenticate, so none may send a command (set control_key_file, or run as the "
			"service with its StateDirectory)");
}

/* Follow the config; where the new sockets cannot be bound, the old ones are bound again. */
static void server_open(struct daemon *d, struct gf_dm_api *a)
{
	char path[512];
	unix_path(d->cfg, path, sizeof(path));
	const char *addr = d->cfg->control_address ? d->cfg->control_address : GF_API_DEFAULT_ADDRESS;
	int port = d->cfg->control_port;
	char origins[sizeof(a->origins)] = "";
	for (uint32_t i = 0, n = 0; i < d->cfg->n_control_allowed_origins && n < sizeof(origins); i++)
		n += (uint32_t)snprintf(origins + n, sizeof(origins) - n, "%s ",
					d->cfg->control_allowed_origins[i]);
	int same = strcmp(a->path, path) == 0 && a->port == port && strcmp(a->address, addr) == 0 &&
		   strcmp(a->origins, origins) == 0;
	if (a->srv && (same || !move_now(a))) {
		a->move_due_ms = same ? 0 : a->move_due_ms;
		return;
	}
	char old_path[sizeof(a->path)], old_addr[sizeof(a->address)];
	int old_port = a->port, had = a->srv != NULL;
	snprintf(old_path, sizeof(old_path), "%s", a->path);
	snprintf(old_addr, sizeof(old_addr), "%s", a->address);
	gf_api_server_free(a->srv); /* first: the same TCP port on another address would clash */
	a->srv = NULL;
	struct gf_errbuf eb = {{0}};
	if ((path[0] || port) && server_bind(a, d->cfg, path, addr, &port, &eb) != 0) {
		if (!had) {
			gf_warn("no control API: %s", eb.msg);
		} else {
			gf_warn("control API stays where it was: %s", eb.msg);
			snprintf(path, sizeof(path), "%s", old_path);
			addr = old_addr;
			port = old_port;
			if (server_bind(a, d->cfg, path, addr, &port, &eb) != 0)
				gf_warn("no control API: %s", eb.msg);
		}
	}
	snprintf(a->path, sizeof(a->path), "%s", path);
	snprintf(a->address, sizeof(a->address), "%s", addr);
	snprintf(a->origins, sizeof(a->origins), "%s", origins);
	a->port = port;
	if (a->srv)
		server_log(a);
}

/* SetConfig's control socket, where it moves: bound now and let go, so that a path that cannot
 * be (a regular file there, a folder that does not exist) is refused before anything changes. */
static int probe_unix(const struct daemon *d, const struct gf_config *c, struct gf_errbuf *eb)
{
	char path[512];
	if (!d->api || !unix_path(c, path, sizeof(path)) || strcmp(path, d->api->path) == 0)
		return 0;
	struct gf_api_server *s = NULL;
	struct gf_api_server_params p = {.unix_path = path};
	struct gf_errbuf why = {{0}};
	int err = gf_api_server_new(&s, d->api->proto, &p, &why);
	gf_api_server_free(s);
	if (err)
		gf_errbuf_set(eb, "control_socket: cannot listen at %s: %s", path, why.msg);
	return err;
}

/* The control key, at start and again when a reload names another file. */
static void key_follow(struct daemon *d, struct gf_dm_api *a)
{
	const char *f = d->cfg->control_key_file ? d->cfg->control_key_file : "";
	if (a->key_read && strcmp(a->key_file, f) == 0)
		return;
	char key[160];
	struct gf_errbuf eb = {{0}};
	if (gf_dm_key_load(d->cfg, key, sizeof(key), &eb) != 0)
		gf_warn("no control key: %s (only the daemon's own user and root may change protected "
			"settings)",
			eb.msg);
	a->has_key = !eb.msg[0] && key[0];
	gf_api_set_key(a->proto, a->has_key ? key : "");
	memset(key, 0, sizeof(key));
	snprintf(a->key_file, sizeof(a->key_file), "%s", f);
	a->key_read = 1;
}

void gf_dm_api_open(struct daemon *d)
{
	if (!d->cfg)
		return;
	if (!d->api) {
		/* A client gone mid-write must be an EPIPE, not a signal that ends the daemon:
		 * libwebsockets's writes do not all pass MSG_NOSIGNAL. */
		signal(SIGPIPE, SIG_IGN);
		struct gf_dm_api *a = calloc(1, sizeof(*a));
		struct gf_api_ops ops = {.ctx = d,
					 .status = op_status,
					 .config_text = op_config_text,
					 .validate_config = op_validate,
					 .set_config = op_set_config,
					 .patch_config = op_patch_config,
					 .reload = op_reload,
					 .get_volume = vol_get,
					 .set_volume = vol_set,
					 .get_mute = mute_get,
					 .set_mute = mute_set,
					 .levels = levels,
					 .reset_clipped = reset_clipped,
					 .devices = devices,
					 .response_svg = response_svg,
					 .get_stage = stage_get,
					 .set_stage = stage_set};
		if (!a || gf_api_new(&a->proto, &ops) != 0) {
			free(a);
			gf_warn("no control API: out of memory");
			return;
		}
		a->wait_ms = -1;
		d->api = a;
	}
	key_follow(d, d->api);
	server_open(d, d->api);
}

void gf_dm_api_close(struct daemon *d)
{
	struct gf_dm_api *a = d->api;
	if (!a)
		return;
	gf_api_server_free(a->srv);
	gf_api_free(a->proto);
	free(a->waiting_text);
	free(a->seen_text);
	free(a->prev_text);
	free(a);
	d->api = NULL;
}

int gf_dm_api_pollfds(struct daemon *d, struct pollfd *p, int max)
{
	return d->api && d->api->srv ? gf_api_server_pollfds(d->api->srv, p, max) : 0;
}

int gf_dm_api_timeout(const struct daemon *d, int t)
{
	int w = d->api && d->api->srv ? d->api->wait_ms : -1;
	return w >= 0 && w < t ? w : t;
}

/* A waiting request's build starts once no other build runs (start-up's included). */
static void request_due(struct daemon *d, struct gf_dm_api *a)
{
	if (a->waiting == REQ_NONE || d->build || !d->engine || a->running_token)
		return;
	a->running_token = a->waiting_token;
	a->waiting = REQ_NONE;
	char *text = a->waiting_text;
	a->waiting_text = NULL;
	gf_dm_reload_begin(d, text ? "control API SetConfig" : "control API Reload", text);
	free(text);
}

/* The socket's file removed under the daemon (someone cleaning /run/gpufir): listen there again. */
static void recheck(struct daemon *d, struct gf_dm_api *a)
{
	int64_t now = gf_now_ms();
	if (!a->srv || now < a->next_check_ms)
		return;
	a->next_check_ms = now + STATUS_RECHECK_MS;
	if (gf_api_server_bound(a->srv))
		return;
	gf_notice("control socket %s was removed or replaced: listening there again", a->path);
	gf_api_server_free(a->srv);
	a->srv = NULL;
	a->path[0] = '\0'; /* differs from the config's: server_open makes it anew */
	server_open(d, a);
}

void gf_dm_api_serve(struct daemon *d, const struct pollfd *p, int n)
{
	struct gf_dm_api *a = d->api;
	if (!a)
		return;
	recheck(d, a);
	track_config(d, a);
	request_due(d, a);
	a->wait_ms = a->srv ? gf_api_server_service(a->srv, p, n) : -1;
	if (a->move_due_ms) { /* waits for a reply to be written: look again soon */
		server_open(d, a);
		if (a->move_due_ms && (a->wait_ms < 0 || a->wait_ms > 10))
			a->wait_ms = 10;
	}
}

void gf_dm_api_reload_done(struct daemon *d, const struct gf_reload_result *r)
{
	struct gf_dm_api *a = d->api;
	if (!a || !a->running_token)
		return;
	uint64_t t = a->running_token;
	a->running_token = 0;
	track_config(d, a);
	gf_api_complete(a->proto, t, r->outcome == GF_RELOAD_FAILED ? (r->err ? r->err : GF_E_CONFIG) : 0,
			r->text);
}

void gf_dm_sockets_serve(struct daemon *d, const struct pollfd *p, int n)
{
	if (d->status && p[2].revents)
		gf_dm_status_serve(d);
	gf_dm_api_serve(d, p + 4, n - 4);
}
