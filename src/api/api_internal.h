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
	int64_t now_ms; /* the last tick's time (subscriptions start from it) */
	struct gf_api_standing_slot standing[GF_API_MAX_STANDING];
	char key[160];	  /* the control key ("": none) */
	int caller_owner; /* while an op runs: its client is the owner */
};

/* One request as a command handler sees it. */
struct gf_api_req {
	struct gf_api *a;
	void *client;
	gf_api_send_fn send;
	const char *name; /* static: the table's */
	json_t *arg;	  /* NULL for a bare "Command" */
};

/* What a command takes. */
enum gf_api_arg {
	GF_ARG_NONE,
	GF_ARG_NUMBER,
	GF_ARG_STRING,
	GF_ARG_BOOL,
	GF_ARG_OBJECT,
	GF_ARG_ANY,
	GF_ARG_OPT_STRING /* none, null or a string */
};

/* A handler: 0 with *value (NULL: no value field; a new reference), a
 * negative GF_E_* with the reason in eb, or GF_API_PENDING (its reply comes
 * from gf_api_complete). */
typedef int (*gf_api_cmd_fn)(struct gf_api_req *r, json_t **value, struct gf_errbuf *eb);

struct gf_api_cmd {
	const char *name;
	enum gf_api_arg arg;
	gf_api_cmd_fn fn;
};

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

/* api_proto.c */
/** Reserve a pending reply for @p r. @return its token, or 0 when the table is full */
uint64_t gf_api_pending_add(struct gf_api_req *r);
/** Drop a reserved token (its op failed at once). */
void gf_api_pending_drop(struct gf_api *a, uint64_t token);
/** Subscribe @p r's client to levels every @p interval_ms (0: stop). @return 0 or GF_E_BUSY */
int gf_api_subscribe(struct gf_api_req *r, uint32_t interval_ms);
/** The levels object (capture_peak, capture_rms, playback_peak, playback_rms). */
json_t *gf_api_levels_json(const struct gf_api_levels *lv);
/** Send {name: {"result": "Ok"|"Error", "value": v}} (v stolen; NULL: none). */
void gf_api_reply(void *client, gf_api_send_fn send, const char *name, int ok, json_t *value);

#endif
