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

/* The running suppressor's channels, and the config's depth and bypass (the first suppressed
 * channel's), or 0 where none runs. */
static uint32_t suppressor_config(const struct daemon *d, double *db, int *bypass)
{
	struct gf_config_suppress cs = {0};
	uint32_t channels = gf_reload_out_channels(d->cfg);
	for (uint32_t c = 0; d->suppress && c < channels; c++)
		if (gf_config_suppress_of(d->cfg, c, &cs)) {
			*db = cs.reduction_db;
			*bypass = cs.bypass;
			return gf_suppress_bank_active(d->suppress);
		}
	return 0;
}

/* The floors of the config and the API's settings to the bank; a split GPU batch is logged (the
 * reload's check keeps it from happening: gf_config_suppress_differs). */
static int publish_suppressor(struct daemon *d, struct gf_errbuf *eb)
{
	uint32_t channels = gf_reload_out_channels(d->cfg);
	float stack[FLOORS_ON_STACK],
		*floors = channels <= FLOORS_ON_STACK ? stack : malloc(channels * sizeof(float));
	if (!floors) {
		gf_errbuf_set(eb, "suppressor: out of memory for %u channels", channels);
		return GF_E_NOMEM;
	}
	gf_config_suppress_floors(d->cfg, channels, &d->stage_live[GF_API_SUPPRESSOR], floors);
	if (gf_suppress_bank_set_floor(d->suppress, floors) != 0)
		gf_warn("suppressor: channels that run as one GPU batch were given different depths: "
			"they take the first one's");
	if (floors != stack)
		free(floors);
	return 0;
}

/* The running neural stage's channels, and the config's attenuation limit and bypass (its first
 * channel's: the channels share one stage), or 0 where none runs. */
static uint32_t neural_config(const struct daemon *d, double *db, int *bypass)
{
	struct gf_config_neural nc = {0};
	const struct gf_neural_bank *nb = gf_suppress_bank_neural(d->suppress);
	uint32_t channels = gf_reload_out_channels(d->cfg);
	for (uint32_t c = 0; nb && c < channels; c++)
		if (gf_config_neural_of(d->cfg, c, &nc)) {
			*db = nc.atten_lim_db;
			*bypass = nc.bypass;
			return gf_neural_bank_active(nb);
		}
	return 0;
}

/* The attenuation limit and bypass in force (the API's, else the config's) to the running stage:
 * the limit first, so that a refused one changes nothing. */
static int publish_neural(struct daemon *d, struct gf_errbuf *eb)
{
	struct gf_api_stage n;
	struct gf_neural_bank *nb = gf_suppress_bank_neural(d->suppress);
	int err = gf_daemon_stage_get(d, GF_API_NEURAL, &n, eb);
	if (err || !nb || !n.channels)
		return err;
	if (gf_neural_bank_set_atten_lim(nb, n.db) != 0) {
		gf_errbuf_set(eb, "neural stage: atten_lim_db %g refused by the running stage", n.db);
		return GF_E_INVAL;
	}
	gf_neural_bank_set_bypass(nb, n.bypass);
	return 0;
}

/* What the daemon knows of each stage: its names in the log and the messages, the range of its dB
 * (the config's), its settings in the running config, and how they reach it. */
static const struct stage {
	const char *what, *db_name, *design;
	double min_db, max_db;
	uint32_t (*config)(const struct daemon *d, double *db, int *bypass);
	int (*publish)(struct daemon *d, struct gf_errbuf *eb);
} stages[GF_API_STAGES] = {
	[GF_API_SUPPRESSOR] = {"noise suppressor", "depth_db", "suppress", GF_CONFIG_MIN_REDUCTION_DB,
			       GF_SUPPRESS_MAX_REDUCTION_DB, suppressor_config, publish_suppressor},
	[GF_API_NEURAL] = {"neural stage", "atten_lim_db", "deepfilter", GF_CONFIG_MIN_ATTEN_LIM_DB,
			   GF_NEURAL_MAX_ATTEN_LIM_DB, neural_config, publish_neural},
};

void gf_dm_suppress_reload(struct daemon *d, const struct gf_config *old)
{
	struct gf_suppress_live *sup = &d->stage_live[GF_API_SUPPRESSOR],
				*neu = &d->stage_live[GF_API_NEURAL];
	if (old && d->cfg) {
		int changed = gf_config_suppress_live_differs(old, d->cfg, gf_reload_out_channels(d->cfg));
		sup->has_depth &= !(changed & GF_SUPPRESS_LIVE_DEPTH);
		sup->has_bypass &= !(changed & GF_SUPPRESS_LIVE_BYPASS);
		neu->has_depth &= !(changed & GF_NEURAL_LIVE_ATTEN);
		neu->has_bypass &= !(changed & GF_NEURAL_LIVE_BYPASS);
	}
	for (int id = 0; d->suppress && d->cfg && id < GF_API_STAGES; id++) {
		struct gf_errbuf eb = {{0}};
		if (stages[id].publish(d, &eb) != 0)
			gf_warn("%s", eb.msg);
	}
}

int gf_daemon_stage_get(const struct daemon *d, enum gf_api_stage_id id, struct gf_api_stage *r,
			struct gf_errbuf *eb)
{
	*r = (struct gf_api_stage){.max_db = stages[id].max_db};
	if (!d->cfg) {
		gf_errbuf_set(eb, "the configuration is not loaded yet");
		return GF_E_BUSY;
	}
	double db = 0.0;
	int bypass = 0;
	if (!(r->channels = stages[id].config(d, &db, &bypass)))
		return 0;
	const struct gf_suppress_live *l = &d->stage_live[id];
	r->db = l->has_depth ? l->depth_db : db;
	r->bypass = l->has_bypass ? l->bypass : bypass;
	return 0;
}

int gf_daemon_stage_set(struct daemon *d, enum gf_api_stage_id id, const struct gf_api_stage *q,
			struct gf_api_stage *r, struct gf_errbuf *eb)
{
	const struct stage *s = &stages[id];
	if (q->has_db && !(q->db >= s->min_db && q->db <= s->max_db)) {
		gf_errbuf_set(eb, "%s %g is outside %g..%g dB", s->db_name, q->db, s->min_db, s->max_db);
		return GF_E_INVAL;
	}
	int err = gf_daemon_stage_get(d, id, r, eb);
	if (err)
		return err;
	if (!r->channels) {
		gf_errbuf_set(eb, "the running configuration has no %s (design = \"%s\")", s->what,
			      s->design);
		return GF_E_UNSUPPORTED;
	}
	struct gf_suppress_live *l = &d->stage_live[id], was = *l;
	if (q->has_db) {
		l->has_depth = 1;
		l->depth_db = q->db;
	}
	if (q->has_bypass) {
		l->has_bypass = 1;
		l->bypass = q->bypass;
	}
	if ((err = s->publish(d, eb)) != 0) {
		*l = was;
		return err;
	}
	err = gf_daemon_stage_get(d, id, r, eb);
	/* at debug, as the volume's changes are not logged: any client may send these as fast as a
	 * slider moves, and a journal rate-limits the service as a whole (its warnings too) */
	gf_debug("%s: %s, %s %.1f dB (control API)", s->what, r->bypass ? "bypassed" : "on", s->db_name,
		 r->db);
	return err;
}
