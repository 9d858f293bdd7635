/*
 * The live controls of the stages after the FIR (daemon_control.h). The noise
 * suppressor's bypass and depth, set over the control API or by a reload that
 * changes only a suppressor's reduction_db or bypass, are published to the
 * running bank as one gain floor a channel (gf_suppress_bank_set_floor), which
 * the worker ramps to. The neural stage's bypass and attenuation limit, set
 * over the API or by a reload that changes only its bypass or atten_lim_db,
 * go to the stage the bank runs (neural_bank.h: the bypass ramped, the limit
 * from the next hop). Neither restarts the stream or clicks.
 *
 * What the API sets wins over the configuration's values until a reload
 * changes those: a reload that changes some suppressor's reduction_db drops
 * the API's depth, one that changes a bypass drops the API's bypass (the
 * file's edit is the newer word), as a reload's volume_db does for the
 * volume; the neural stage's atten_lim_db and bypass likewise.
 */
#include <stdlib.h>

#include "daemon_control.h"
#include "daemon_internal.h"
#include "neural_bank.h"
#include "suppress.h"

/* Channel floors on the stack up to this many channels; beyond, allocated. */
#define FLOORS_ON_STACK 64u

/* The first channel with a suppressor in the running config, or -1. */
static int first_suppressed(const struct daemon *d, struct gf_config_suppress *cs)
{
	uint32_t channels = gf_reload_out_channels(d->cfg);
	for (uint32_t c = 0; c < channels; c++)
		if (gf_config_suppress_of(d->cfg, c, cs))
			return (int)c;
	return -1;
}

/* The floors of the config and the API's settings to the bank; a split GPU batch is logged (the
 * reload's check keeps it from happening: gf_config_suppress_differs). */
static int publish(struct daemon *d, struct gf_errbuf *eb)
{
	uint32_t channels = gf_reload_out_channels(d->cfg);
	float stack[FLOORS_ON_STACK],
		*floors = channels <= FLOORS_ON_STACK ? stack : malloc(channels * sizeof(float));
	if (!floors) {
		gf_errbuf_set(eb, "suppressor: out of memory for %u channels", channels);
		return GF_E_NOMEM;
	}
	gf_config_suppress_floors(d->cfg, channels, &d->sup_live, floors);
	if (gf_suppress_bank_set_floor(d->suppress, floors) != 0)
		gf_warn("suppressor: channels that run as one GPU batch were given different depths: "
			"they take the first one's");
	if (floors != stack)
		free(floors);
	return 0;
}

/* The neural stage of the running config (its first channel's: the channels share one), or 0. */
static int neural_config(const struct daemon *d, struct gf_config_neural *nc)
{
	uint32_t channels = gf_reload_out_channels(d->cfg);
	for (uint32_t c = 0; c < channels; c++)
		if (gf_config_neural_of(d->cfg, c, nc))
			return 1;
	return 0;
}

/* The bypass and attenuation limit in force (the API's, else the config's) to the running stage. */
static void publish_neural(struct daemon *d)
{
	struct gf_api_neural n;
	struct gf_errbuf eb = {{0}};
	struct gf_neural_bank *nb = gf_suppress_bank_neural(d->suppress);
	if (!nb || gf_daemon_neural_get(d, &n, &eb) != 0 || !n.channels)
		return;
	gf_neural_bank_set_bypass(nb, n.bypass);
	if (gf_neural_bank_set_atten_lim(nb, n.atten_lim_db) != 0) /* the config's and the API's checked */
		gf_warn("neural stage: atten_lim_db %g refused", n.atten_lim_db);
}

void gf_dm_suppress_reload(struct daemon *d, const struct gf_config *old)
{
	if (old && d->cfg) {
		int changed = gf_config_suppress_live_differs(old, d->cfg, gf_reload_out_channels(d->cfg));
		d->sup_live.has_depth &= !(changed & GF_SUPPRESS_LIVE_DEPTH);
		d->sup_live.has_bypass &= !(changed & GF_SUPPRESS_LIVE_BYPASS);
		d->neu_live.has_depth &= !(changed & GF_NEURAL_LIVE_ATTEN);
		d->neu_live.has_bypass &= !(changed & GF_NEURAL_LIVE_BYPASS);
	}
	struct gf_errbuf eb = {{0}};
	if (d->suppress && d->cfg && publish(d, &eb) != 0)
		gf_warn("%s", eb.msg);
	if (d->suppress && d->cfg)
		publish_neural(d);
}

static int not_loaded(struct gf_errbuf *eb)
{
	gf_errbuf_set(eb, "the configuration is not loaded yet");
	return GF_E_BUSY;
}

/* A request's members into the API's settings @p l (each set one wins until a reload changes it). */
static void take(struct gf_suppress_live *l, int has_db, double db, int has_bypass, int bypass)
{
	if (has_db) {
		l->has_depth = 1;
		l->depth_db = db;
	}
	if (has_bypass) {
		l->has_bypass = 1;
		l->bypass = bypass;
	}
}

int gf_daemon_suppressor_get(const struct daemon *d, struct gf_api_suppressor *r, struct gf_errbuf *eb)
{
	*r = (struct gf_api_suppressor){.max_depth_db = GF_SUPPRESS_MAX_REDUCTION_DB};
	if (!d->cfg)
		return not_loaded(eb);
	struct gf_config_suppress cs = {0};
	if (!d->suppress || first_suppressed(d, &cs) < 0)
		return 0;
	r->channels = gf_suppress_bank_active(d->suppress);
	r->depth_db = d->sup_live.has_depth ? d->sup_live.depth_db : cs.reduction_db;
	r->bypass = d->sup_live.has_bypass ? d->sup_live.bypass : cs.bypass;
	return 0;
}

int gf_daemon_suppressor_set(struct daemon *d, const struct gf_api_suppressor *q, struct gf_api_suppressor *r,
			     struct gf_errbuf *eb)
{
	if (q->has_depth && !(q->depth_db >= 0.0 && q->depth_db <= GF_SUPPRESS_MAX_REDUCTION_DB)) {
		gf_errbuf_set(eb, "depth_db %g is outside 0..%g dB", q->depth_db,
			      GF_SUPPRESS_MAX_REDUCTION_DB);
		return GF_E_INVAL;
	}
	int err = gf_daemon_suppressor_get(d, r, eb);
	if (err)
		return err;
	if (!r->channels) {
		gf_errbuf_set(eb,
			      "the running configuration has no noise suppressor (design = \"suppress\")");
		return GF_E_UNSUPPORTED;
	}
	struct gf_suppress_live was = d->sup_live;
	take(&d->sup_live, q->has_depth, q->depth_db, q->has_bypass, q->bypass);
	if ((err = publish(d, eb)) != 0) {
		d->sup_live = was;
		return err;
	}
	gf_info("suppressor: %s, depth %.1f dB (control API)",
		(q->has_bypass ? q->bypass : r->bypass) ? "bypassed" : "on",
		q->has_depth ? q->depth_db : r->depth_db);
	return gf_daemon_suppressor_get(d, r, eb);
}

int gf_daemon_neural_get(const struct daemon *d, struct gf_api_neural *r, struct gf_errbuf *eb)
{
	*r = (struct gf_api_neural){.max_atten_lim_db = GF_NEURAL_MAX_ATTEN_LIM_DB};
	if (!d->cfg)
		return not_loaded(eb);
	struct gf_config_neural nc = {0};
	const struct gf_neural_bank *nb = gf_suppress_bank_neural(d->suppress);
	if (!nb || !neural_config(d, &nc))
		return 0;
	r->channels = gf_neural_bank_active(nb);
	r->atten_lim_db = d->neu_live.has_depth ? d->neu_live.depth_db : nc.atten_lim_db;
	r->bypass = d->neu_live.has_bypass ? d->neu_live.bypass : nc.bypass;
	return 0;
}

int gf_daemon_neural_set(struct daemon *d, const struct gf_api_neural *q, struct gf_api_neural *r,
			 struct gf_errbuf *eb)
{
	/* the config's range (config_filters.c): 1 dB is the least a limit that cuts anything means */
	if (q->has_atten && !(q->atten_lim_db >= 1.0 && q->atten_lim_db <= GF_NEURAL_MAX_ATTEN_LIM_DB)) {
		gf_errbuf_set(eb, "atten_lim_db %g is outside 1..%g dB", q->atten_lim_db,
			      GF_NEURAL_MAX_ATTEN_LIM_DB);
		return GF_E_INVAL;
	}
	int err = gf_daemon_neural_get(d, r, eb);
	if (err)
		return err;
	if (!r->channels) {
		gf_errbuf_set(eb, "the running configuration has no neural stage (design = \"deepfilter\")");
		return GF_E_UNSUPPORTED;
	}
	take(&d->neu_live, q->has_atten, q->atten_lim_db, q->has_bypass, q->bypass);
	publish_neural(d);
	gf_info("neural stage: %s, atten_lim_db %.1f dB (control API)",
		(q->has_bypass ? q->bypass : r->bypass) ? "bypassed" : "on",
		q->has_atten ? q->atten_lim_db : r->atten_lim_db);
	return gf_daemon_neural_get(d, r, eb);
}
