/*
 * Internal to the api folder: the protocol's state, shared by api_proto.c
 * (messages in, replies out, pending replies, subscriptions) and api_cmds.c
 * (the command table), and the transports' shared client buffers.
 */
#ifndef GPUFIR_API_INTERNAL_H
#define GPUFIR_API_INTERNAL_H

#include <jansson.h>

#include "api.h"

#define GF_API_MAX_PENDING 32u
#define GF_API_MAX_SUBS GF_API_MAX_CLIENTS

struct gf_api_pending {
	uint64_t token; /* 0: free */
	void *client;
	gf_api_send_fn send;
	const char *name; /* the command's name (static: the table's) */
};

struct gf_api_sub {
	void *client; /* NULL: free */
	gf_api_send_fn send;
	uint32_t interval_ms;
	int64_t next_ms;
};

/* GetUpdateInterval before any SetUpdateInterval: CamillaDSP's default, ms. */
#define GF_API_UPDATE_INTERVAL_MS 1000u

/* CamillaDSP's faders: 0 is Main (the program's volume and mute), 1 to 4 Aux1 to Aux4. */
#define GF_API_FADERS 5

struct gf_api_hist; /* api_levels.c */
/* A client whose standing is not GF_API_GUEST (the transports' clients, both of them). */
#define GF_API_MAX_STANDING (2u * GF_API_MAX_CLIENTS)
struct gf_api_standing_slot {
	void *client; /* NULL: free */
	enum gf_api_standing standing;
};

struct gf_api {
	struct gf_api_ops ops;
	struct gf_api_pending pend[GF_API_MAX_PENDING];
	struct gf_api_sub subs[GF_API_MAX_SUBS];
	uint64_t next_token;
	int64_t now_ms;		      /* the last tick's time (subscriptions start from it) */
	struct gf_api_hist *hist;     /* the level history (api_levels.c) */
	double aux_db[GF_API_FADERS]; /* Aux1..4's volume (entry 0 unused: Main is the program's) */
	int aux_mute[GF_API_FADERS];  /* and mute */
	uint32_t update_interval_ms;  /* SetUpdateInterval's value, reported back */
	struct gf_api_standing_slot standing[GF_API_MAX_STANDING];
	char key[160];	  /* the control key ("": none) */
	int caller_owner; /* while an op runs: its client is the owner */
};

/* One request as a command handler sees it. */
struct gf_api_req {
	struct gf_api *a;
	void *client;
	gf_api_send_fn send;
	const char *name;  /* static: the table's */
	json_t *arg;	   /* NULL for a bare "Command" */
	const char *etype; /* a failing handler's CamillaDSP error type; NULL: by its code */
};

/* What a command takes. */
enum gf_api_arg {
	GF_ARG_NONE,
	GF_ARG_NUMBER,
	GF_ARG_STRING,
	GF_ARG_BOOL,
	GF_ARG_OBJECT,
	GF_ARG_ANY,
	GF_ARG_OPT_STRING, /* none, null or a string */
	GF_ARG_ANY_OR_NONE /* anything, or nothing */
};

/* A handler: 0 with *value (NULL: no value field; a new reference), a
 * negative GF_E_* with the reason in eb, or GF_API_PENDING (its reply comes
 * from gf_api_complete). */
typedef int (*gf_api_cmd_fn)(struct gf_api_req *r, json_t **value, struct gf_errbuf *eb);

/* What kind of command: its errors are typed by it (gf_api_error_type). */
enum gf_api_kind { GF_CMD_PLAIN, GF_CMD_CONFIG };

struct gf_api_cmd {
	const char *name;
	enum gf_api_arg arg;
	gf_api_cmd_fn fn;
	enum gf_api_kind kind;
};

/* A table of commands, in one file each (api_cmds.c, api_compat.c, api_levels.c). */
struct gf_api_cmd_table {
	const struct gf_api_cmd *cmds;
	size_t n;
};

/* CamillaDSP's volume range, dB: every volume request is clamped to it first. */
#define GF_API_VOLUME_MIN_DB -150.0
#define GF_API_VOLUME_MAX_DB 50.0
/* api_auth.c */
/** {"Authenticate": KEY}: the client becomes the owner when KEY is the control key. */
int gf_api_c_authenticate(struct gf_api_req *r, json_t **value, struct gf_errbuf *eb);
/** 0 with the reason in @p why when @p client may not run @p cmd yet (locked, not authenticated). */
int gf_api_may_run(struct gf_api *a, void *client, const char *cmd, char *why, size_t len);
enum gf_api_standing gf_api_standing_of(struct gf_api *a, void *client);
/** Forget @p client (gone). */
void gf_api_standing_gone(struct gf_api *a, void *client);

/* api_cmds.c */
const struct gf_api_cmd *gf_api_cmd_find(const char *name);
/** 0 where the program has @p op, else GF_E_UNSUPPORTED with the reason in @p eb. */
int gf_api_need(const void *op, struct gf_errbuf *eb);
/** The program's status, its defaults filled first (no buffer level, rate adjust 1). */
void gf_api_status_of(struct gf_api *a, struct gf_api_status *st);
/** The levels since the program's previous reading, recorded in the history (api_levels.c). */
int gf_api_levels_read(struct gf_api *a, struct gf_api_levels *lv, struct gf_errbuf *eb);
/** 0 where @p db is finite, else GF_E_INVAL with "WHAT must be a finite number of dB" in @p eb (JSON
 *  carries no NaN or infinity, but a client's number may still overflow what its reader holds). */
int gf_api_finite_db(double db, const char *what, struct gf_errbuf *eb);
/** A volume request's dB checked finite and clamped to CamillaDSP's range (every fader's first step). */
int gf_api_volume_arg(double *db, struct gf_errbuf *eb);
/** The current volume, CamillaDSP's clamp and the program's applied (the reply of SetVolume). */
int gf_api_volume_set(struct gf_api_req *r, double db, double *in_force, struct gf_errbuf *eb);
/** AdjustVolume's argument, a number or [dB, min, max]. @return 0, or GF_E_INVAL */
int gf_api_adjust_arg(const json_t *arg, double *step, double *lo, double *hi);

/* api_compat.c: faders, the update interval, the resampler's load, and CamillaDSP's
 * commands gpufir has no meaning for */
extern const struct gf_api_cmd_table gf_api_compat_cmds;
/** CamillaDSP's error type for @p code from command @p c (never NULL). */
const char *gf_api_error_type(const struct gf_api_cmd *c, int code);

/* api_suppress.c: GetSuppressor, SetSuppressor, GetNeural, SetNeural */
extern const struct gf_api_cmd_table gf_api_suppress_cmds;
/** Stage @p id's Get object (GetStatus's "suppressor" and "neural" too). */
json_t *gf_api_stage_json(enum gf_api_stage_id id, const struct gf_api_stage *s);
/** GetStatus's member for stage @p id ("suppressor", "neural"). */
const char *gf_api_stage_key(enum gf_api_stage_id id);

/* api_levels.c: the level history and its "since" commands */
extern const struct gf_api_cmd_table gf_api_level_cmds;
/** Allocate the history (gf_api_new). @return 0 or GF_E_NOMEM */
int gf_api_levels_new(struct gf_api *a);
/**
 * A plain reading (the level commands, a subscription's push): the audio since the previous
 * plain reading. Without polls that is the fresh reading; while the history polls (which takes
 * the audio from the shared reader), the slots since the previous plain reading.
 */
int gf_api_levels_plain(struct gf_api *a, struct gf_api_levels *lv, struct gf_errbuf *eb);
/** Add a reading to the history and the peaks since start. @return 0 */
int gf_api_levels_record(struct gf_api *a, const struct gf_api_levels *lv);
/** Read levels for the history when it is armed and due. @return ms until the next, or -1 */
int gf_api_levels_poll(struct gf_api *a);
void gf_api_levels_free(struct gf_api_hist *h);
/** @p client went away: forget its "since last" marks. */
void gf_api_levels_client_gone(struct gf_api *a, void *client);

/* api_proto.c */
/** Reserve a pending reply for @p r. @return its token, or 0 when the table is full */
uint64_t gf_api_pending_add(struct gf_api_req *r);
/** Drop a reserved token (its op failed at once). */
void gf_api_pending_drop(struct gf_api *a, uint64_t token);
/** Subscribe @p r's client to levels every @p interval_ms (0: stop). @return 0 or GF_E_BUSY */
int gf_api_subscribe(struct gf_api_req *r, uint32_t interval_ms);
/** The levels object (capture_peak, capture_rms, playback_peak, playback_rms). */
json_t *gf_api_levels_json(const struct gf_api_levels *lv);
/**
 * Send {name: {"result": R, "value": v}} (v stolen; NULL: none). R is "Ok" for a NULL
 * @p etype; else CamillaDSP's typed error, {"ConfigValidationError": why} or, for its
 * simple errors, just the type ("InvalidFaderError"), where @p value is the message.
 */
void gf_api_reply(void *client, gf_api_send_fn send, const char *name, const char *etype, json_t *value);

#endif
