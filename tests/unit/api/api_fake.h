/* The control API's fake daemon and reply helpers (api_fake.c), shared by the
 * protocol's tests. Every helper fails the test loudly (CHECK) on a wrong reply. */
#ifndef GPUFIR_TEST_API_FAKE_H
#define GPUFIR_TEST_API_FAKE_H

#include <jansson.h>
#include <stdint.h>

#include "api.h"

struct fake {
	double volume;
	int mute;
	int have_volume; /* 0: the volume ops answer "not available" */
	char *text, *prev;
	char *set_text; /* the last SetConfig/PatchConfig text */
	char *patch_settings;
	uint32_t patch_n;
	char patch_keys[4][32];
	uint64_t token;
	int reloads;
	int levels_calls;
	double limit;  /* the program's own volume limit (as volume_limit_db) */
	long clipped;  /* reported in the status; ResetClippedSamples zeroes it */
	int resets;    /* ResetClippedSamples calls */
	int no_stream; /* the device ops answer as a daemon without an open stream */
	/* what the status reports, where set */
	const char *stop_reason, *stop_text, *state_file;
	int state_dirty;
	double rate_adjust;
	int no_buffer; /* the status has no buffer level (-1) */
	/* the next level readings' values, where set (else fixed ones, over no audio) */
	const struct gf_api_levels *levels;
	int levels_err;				  /* the levels op fails with this (no stream) */
	struct gf_api *api;			  /* for the ops that ask who called, where set */
	int owner;				  /* the last ValidateConfig's caller was the owner */
	struct gf_api_stage stage[GF_API_STAGES]; /* each stage's controls (channels 0: none runs) */
	int sets[GF_API_STAGES];		  /* Set commands that reached the program, per stage */
};

/** The ops of @p f: every op of struct gf_api_ops but response_svg. */
struct gf_api_ops fake_ops(struct fake *f);

#define MAX_REPLIES 64
/** The replies sent since the last clear(), as text. */
extern char *replies[MAX_REPLIES];
extern int n_replies;

/** A gf_api_send_fn that keeps each reply in replies[]. */
void capture(void *client, const char *text, size_t len);
void clear(void);
/** Send @p msg; expect exactly one reply; return it parsed (caller decrefs). */
json_t *ask(struct gf_api *a, void *client, const char *msg);
/** The body of {name: body}, checking its result (a string: "Ok", or a simple error's type). */
json_t *body_of(json_t *r, const char *name, const char *result);
/** The value of an Ok reply to @p msg (NULL: none; caller decrefs). */
json_t *ok_value(struct gf_api *a, const char *msg, const char *name);
/** An error reply of CamillaDSP's type @p type whose message has @p why. */
void expect_typed(struct gf_api *a, const char *msg, const char *name, const char *type, const char *why);
/** An error reply (InvalidRequestError, InvalidValueError or a config error) saying @p why. */
void expect_error(struct gf_api *a, const char *msg, const char *name, const char *why);
/** CamillaDSP's {"Invalid": {"error": ...}} saying @p why. */
void expect_invalid(struct gf_api *a, const char *msg, size_t len, const char *why);
/** @p v is that string (or number); consumes @p v. */
void check_string(json_t *v, const char *want);
void check_number(json_t *v, double want);

#endif
