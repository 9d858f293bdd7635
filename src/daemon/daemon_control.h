/**
 * @file daemon_control.h
 * Volume, mute, level meters and clipped samples of the running daemon, for
 * the control interfaces (the status socket, the control API) to call.
 *
 * The volume is the daemon's, not the stream's: it holds across stream
 * restarts, reloads and device losses, and the worker's gain stage
 * (src/chain/gain_stage.h) ramps to it over GF_GAIN_RAMP_MS without a click.
 * A request above the configuration's volume_limit_db is clamped to it (the
 * result says so); one below GF_VOLUME_MIN_DB is clamped to that floor.
 * With a state_file in the configuration, the last volume and mute are
 * written there (beside it, fsync, rename into place) GF_DM_STATE_DEBOUNCE_MS
 * after the last change, at most GF_DM_STATE_MAX_DELAY_MS after the first,
 * and at exit; at start-up they are read back and win over volume_db. A
 * missing, unreadable or corrupt state file is logged and ignored.
 *
 * A reload whose volume_db differs from the running configuration's sets the
 * volume to it (as a request would); one whose volume_limit_db is lower than
 * the volume in force lowers the volume to the new limit.
 *
 * Threads: every function runs on the daemon's control thread. None blocks
 * on the audio path; the state file is written from the control thread.
 * Errors are values: 0, or a negative GF_E_* with a message in @p eb.
 */
#ifndef GPUFIR_DAEMON_CONTROL_H
#define GPUFIR_DAEMON_CONTROL_H

#include <stdint.h>

#include "api.h"
#include "error.h"
#include "gain_stage.h"

struct daemon;

/** The state file is written this long after the last change... */
#define GF_DM_STATE_DEBOUNCE_MS 500
/** ...and at most this long after the first change of a run of changes. */
#define GF_DM_STATE_MAX_DELAY_MS 2000

/** The volume in force after a call. */
struct gf_dm_volume_result {
	double volume_db; /**< the volume now (the target the worker ramps to) */
	double limit_db;  /**< volume_limit_db of the running configuration */
	int mute;	  /**< 1: muted (the volume is kept for the unmute) */
	int clamped;	  /**< 1: the request was out of range and clamped */
	char msg[200];	  /**< what happened, one line ("volume -6.0 dB", "clamped to ...") */
};

/** The volume and mute now. GF_E_BUSY while the configuration is not loaded yet. */
int gf_daemon_volume_get(struct daemon *d, struct gf_dm_volume_result *r, struct gf_errbuf *eb);
/** Set the volume to @p db (clamped). GF_E_INVAL: not a finite number. */
int gf_daemon_volume_set(struct daemon *d, double db, struct gf_dm_volume_result *r, struct gf_errbuf *eb);
/** Change the volume by @p delta_db (clamped). GF_E_INVAL: not a finite number. */
int gf_daemon_volume_adjust(struct daemon *d, double delta_db, struct gf_dm_volume_result *r,
			    struct gf_errbuf *eb);
/** Mute (@p mute 1) or unmute (0); ramped like a volume change. */
int gf_daemon_mute_set(struct daemon *d, int mute, struct gf_dm_volume_result *r, struct gf_errbuf *eb);
/** Mute if unmuted, unmute if muted. */
int gf_daemon_mute_toggle(struct daemon *d, struct gf_dm_volume_result *r, struct gf_errbuf *eb);

/** Stage @p id's live controls now (daemon_suppress.c): channels 0 where none runs; the
 * suppressor's depth and bypass are the first suppressed channel's. GF_E_BUSY while the
 * configuration is not loaded. */
int gf_daemon_stage_get(const struct daemon *d, enum gf_api_stage_id id, struct gf_api_stage *r,
			struct gf_errbuf *eb);
/**
 * Set bypass and/or the dB of stage @p id, ramped by the worker (the suppressor's floor over
 * GF_SUPPRESS_RAMP_S, suppress.h; the neural stage's bypass over GF_NEURAL_RAMP_FRAMES and its
 * attenuation limit from its next hop, neural_bank.h): no restart. They win over the
 * configuration's reduction_db (atten_lim_db) and bypass until a reload changes those.
 * GF_E_INVAL: the dB outside the configuration's range; GF_E_UNSUPPORTED: the stage does not run;
 * nothing changes on an error. @p q: the members whose has_ is set; @p r: what is in force after.
 */
int gf_daemon_stage_set(struct daemon *d, enum gf_api_stage_id id, const struct gf_api_stage *q,
			struct gf_api_stage *r, struct gf_errbuf *eb);

/** The meters of one reader's interval, in dBFS (-INFINITY: silence). */
struct gf_dm_levels {
	uint32_t channels;    /**< 0 before the stream's first block */
	double interval_s;    /**< audio the interval covers (0: none since the previous read) */
	uint64_t clipped;     /**< playback samples beyond +-1.0 since the last reset, all channels */
	double *capture_peak; /**< per channel: the stream's input */
	double *capture_rms;
	double *playback_peak; /**< per channel: the output, after the volume */
	double *playback_rms;
	uint64_t *clipped_ch; /**< per channel */
	double storage[4 * GF_GAIN_MAX_CHANNELS];
	struct gf_gain_levels raw; /**< linear values, as the gain stage gave them */
};

/**
 * The peaks since this reader's previous call and the RMS over the audio
 * since then (@p reader: GF_GAIN_READER_API for the control API,
 * GF_GAIN_READER_STATUS is the status socket's), and the clipped counts.
 * @p out must stay where it is (its arrays point into it). GF_E_BUSY
 * without a stream (no audio: nothing to meter); GF_E_INVAL for @p reader.
 */
int gf_daemon_levels(struct daemon *d, unsigned reader, struct gf_dm_levels *out, struct gf_errbuf *eb);
/** The state file (NULL: none); *@p updated 1 when every change is written there, 0 while
 *  one waits for its write (GetStateFileUpdated). */
const char *gf_daemon_state_file(struct daemon *d, int *updated);
/** Clipped playback samples since the stream started or the last reset. 0 without a stream. */
uint64_t gf_daemon_clipped_get(struct daemon *d);
/** Start the clipped counts again from 0. */
void gf_daemon_clipped_reset(struct daemon *d);

#endif
