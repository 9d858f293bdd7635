/* The protocol's frame (docs/api.md): a message is a JSON string naming a
 * command ("GetVersion") or an object of one member, the command and its
 * argument ({"SetVolume": -10.0}); the reply is an object of one member named
 * after the command, {"result": "Ok", "value": ...}, or on failure CamillaDSP's
 * typed error, {"result": {"ConfigValidationError": why}, "value": why}. A message
 * that is not one of those gets CamillaDSP's {"Invalid": {"error": "..."}}. Replies of
 * slow commands (SetConfig, Reload) wait in a table of pending tokens; level
 * subscriptions are pushed from gf_api_tick(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"

int gf_api_new(struct gf_api **out, const struct gf_api_ops *ops)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return GF_E_NOMEM;
	(*out)->ops = *ops;
	(*out)->update_interval_ms = GF_API_UPDATE_INTERVAL_MS;
	if (gf_api_levels_new(*out) == 0)
		return 0;
	gf_api_free(*out);
	*out = NULL;
	return GF_E_NOMEM;
}

void gf_api_free(struct gf_api *a)
{
	if (a)
		gf_api_levels_free(a->hist);
	free(a);
}

/* Send @p root (stolen) as compact JSON; one too large for a reply becomes an error reply. */
static void send_json(void *client, gf_api_send_fn send, const char *name, json_t *root)
{
	char *text =
		root ? json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10)) : NULL;
	json_decref(root);
	if (text && strlen(text) > GF_API_MAX_REPLY) {
		free(text);
		char msg[160];
		snprintf(msg, sizeof(msg), "the reply is over the limit of %u bytes", GF_API_MAX_REPLY);
		gf_api_reply(client, send, name, "InvalidRequestError", json_string(msg));
		return;
	}
	if (text)
		send(client, text, strlen(text));
	free(text);
}

/* CamillaDSP's errors without a message: the result is the bare type. */
static int simple_error(const char *etype)
{
	return strcmp(etype, "RateLimitExceededError") == 0 || strcmp(etype, "InvalidFaderError") == 0 ||
	       strcmp(etype, "ShutdownInProgressError") == 0;
}

void gf_api_reply(void *client, gf_api_send_fn send, const char *name, const char *etype, json_t *value)
{
	json_t *result = !etype		       ? json_string("Ok")
			 : simple_error(etype) ? json_string(etype)
					       : json_pack("{s:O}", etype, value ? value : json_null());
	json_t *body = result ? json_pack("{s:o}", "result", result) : NULL;
	if (body && value)
		json_object_set_new(body, "value", value);
	else
		json_decref(value);
	send_json(client, send, name, body ? json_pack("{s:o}", name, body) : NULL);
}

/* An error reply, typed for command @p c by @p code (or @p etype where the handler chose). */
static void reply_error(void *client, gf_api_send_fn send, const struct gf_api_cmd *c, const char *etype,
			int code, const char *why)
{
	gf_api_reply(client, send, c->name, etype ? etype : gf_api_error_type(c, code),
		     json_string(why && *why ? why : gf_strerror(code)));
}

static void reply_invalid(void *client, gf_api_send_fn send, const char *why)
{
	send_json(client, send, "Invalid", json_pack("{s:{s:s}}", "Invalid", "error", why));
}

static const char *arg_name(enum gf_api_arg k)
{
	static const char *const names[] = {"no argument",
					    "a number",
					    "a string",
					    "true or false",
					    "an object",
					    "an argument",
					    "no argument or a string",
					    "anything"};
	return names[k];
}

static int arg_ok(enum gf_api_arg k, const json_t *arg)
{
	switch (k) {
	case GF_ARG_NONE:
		return arg == NULL || json_is_null(arg);
	case GF_ARG_NUMBER:
		return json_is_number(arg);
	case GF_ARG_STRING:
		return json_is_string(arg);
	case GF_ARG_BOOL:
		return json_is_boolean(arg);
	case GF_ARG_OBJECT:
		return json_is_object(arg);
	case GF_ARG_ANY:
		return arg != NULL;
	case GF_ARG_OPT_STRING:
		return arg == NULL || json_is_null(arg) || json_is_string(arg);
	case GF_ARG_ANY_OR_NONE:
		return 1;
	}
	return 0;
}

/* Split a parsed message into command name and argument. @return 0, or -1 with why. */
static int split(json_t *root, const char **name, json_t **arg, char *why, size_t len)
{
	if (json_is_string(root)) {
		*name = json_string_value(root);
		*arg = NULL;
		return 0;
	}
	if (json_is_object(root) && json_object_size(root) == 1) {
		void *it = json_object_iter(root);
		*name = json_object_iter_key(it);
		*arg = json_object_iter_value(it);
		return 0;
	}
	snprintf(why, len,
		 "a command is a JSON string (\"GetVersion\") or an object of one member "
		 "({\"SetVolume\": -10.0})");
	return -1;
}

void gf_api_handle(struct gf_api *a, void *client, gf_api_send_fn send, const char *msg, size_t len)
{
	char why[300];
	json_error_t je;
	json_t *root = json_loadb(msg, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(why, sizeof(why), "invalid JSON at byte %d: %s", je.position, je.text);
		reply_invalid(client, send, why);
		return;
	}
	const char *name;
	json_t *arg;
	if (split(root, &name, &arg, why, sizeof(why)) < 0) {
		reply_invalid(client, send, why);
		json_decref(root);
		return;
	}
	const struct gf_api_cmd *c = gf_api_cmd_find(name);
	if (!c) {
		snprintf(why, sizeof(why), "unknown command \"%.100s\"", name);
		reply_invalid(client, send, why);
		json_decref(root);
		return;
	}
	if (!arg_ok(c->arg, arg)) {
		snprintf(why, sizeof(why), "%s takes %s", c->name, arg_name(c->arg));
		gf_api_reply(client, send, c->name, "InvalidRequestError", json_string(why));
		json_decref(root);
		return;
	}
	if (!gf_api_may_run(a, client, c->name, why, sizeof(why))) {
		gf_api_reply(client, send, c->name, "InvalidRequestError", json_string(why));
		json_decref(root);
		return;
	}
	struct gf_api_req r = {.a = a, .client = client, .send = send, .name = c->name, .arg = arg};
	struct gf_errbuf eb = {{0}};
	json_t *value = NULL;
	a->caller_owner = gf_api_standing_of(a, client) == GF_API_OWNER;
	int rc = c->fn(&r, &value, &eb);
	a->caller_owner = 0;
	if (rc == 0)
		gf_api_reply(client, send, c->name, NULL, value);
	else if (rc < 0)
		reply_error(client, send, c, r.etype, rc, eb.msg);
	json_decref(root);
}

uint64_t gf_api_pending_add(struct gf_api_req *r)
{
	for (unsigned i = 0; i < GF_API_MAX_PENDING; i++) {
		struct gf_api_pending *p = &r->a->pend[i];
		if (p->token)
			continue;
		*p = (struct gf_api_pending){
			.token = ++r->a->next_token, .client = r->client, .send = r->send, .name = r->name};
		return p->token;
	}
	return 0;
}

void gf_api_pending_drop(struct gf_api *a, uint64_t token)
{
	for (unsigned i = 0; i < GF_API_MAX_PENDING; i++)
		if (a->pend[i].token == token)
			a->pend[i].token = 0;
}

void gf_api_complete(struct gf_api *a, uint64_t token, int err, const char *why)
{
	for (unsigned i = 0; token && i < GF_API_MAX_PENDING; i++) {
		struct gf_api_pending *p = &a->pend[i];
		if (p->token != token)
			continue;
		p->token = 0;
		if (p->client && err) /* else its client went away: nobody to tell */
			reply_error(p->client, p->send, gf_api_cmd_find(p->name), NULL, err, why);
		else if (p->client)
			gf_api_reply(p->client, p->send, p->name, NULL, NULL);
		return;
	}
}

void gf_api_client_gone(struct gf_api *a, void *client)
{
	for (unsigned i = 0; i < GF_API_MAX_PENDING; i++)
		if (a->pend[i].token && a->pend[i].client == client)
			a->pend[i].client = NULL; /* the token stays until its op completes */
	for (unsigned i = 0; i < GF_API_MAX_SUBS; i++)
		if (a->subs[i].client == client)
			a->subs[i].client = NULL;
	gf_api_levels_client_gone(a, client);
	gf_api_standing_gone(a, client);
}

int gf_api_client_busy(const struct gf_api *a, const void *client)
{
	for (unsigned i = 0; i < GF_API_MAX_PENDING; i++)
		if (a->pend[i].token && a->pend[i].client == client)
			return 1;
	for (unsigned i = 0; i < GF_API_MAX_SUBS; i++)
		if (a->subs[i].client == client)
			return 1;
	return 0;
}

int gf_api_subscribe(struct gf_api_req *r, uint32_t interval_ms)
{
	struct gf_api_sub *free_slot = NULL;
	for (unsigned i = 0; i < GF_API_MAX_SUBS; i++) {
		struct gf_api_sub *s = &r->a->subs[i];
		if (s->client == r->client) {
			s->client = NULL; /* replaced, or stopped */
			free_slot = s;
		} else if (!s->client && !free_slot) {
			free_slot = s;
		}
	}
	if (!interval_ms)
		return 0;
	if (!free_slot)
		return GF_E_BUSY;
	*free_slot = (struct gf_api_sub){.client = r->client,
					 .send = r->send,
					 .interval_ms = interval_ms,
					 .next_ms = r->a->now_ms + interval_ms};
	return 0;
}

json_t *gf_api_levels_json(const struct gf_api_levels *lv)
{
	json_t *o = json_object();
	const double *v[4] = {lv->capture_peak, lv->capture_rms, lv->playback_peak, lv->playback_rms};
	const char *k[4] = {"capture_peak", "capture_rms", "playback_peak", "playback_rms"};
	for (int j = 0; o && j < 4; j++) {
		uint32_t n = j < 2 ? lv->n_capture : lv->n_playback;
		json_t *arr = json_array();
		for (uint32_t c = 0; arr && c < n && c < GF_API_MAX_CH; c++)
			json_array_append_new(arr, json_real(v[j][c]));
		json_object_set_new(o, k[j], arr ? arr : json_null());
	}
	return o;
}

/* One push: {"SignalLevelsEvent": {"result": "Ok", "value": levels}}; an error ends the subscription. */
static void push_levels(struct gf_api *a, struct gf_api_sub *s, const struct gf_api_levels *lv, int err,
			const char *why)
{
	if (err) {
		gf_api_reply(s->client, s->send, "SignalLevelsEvent", "InvalidRequestError",
			     json_string(why));
		s->client = NULL;
		return;
	}
	gf_api_reply(s->client, s->send, "SignalLevelsEvent", NULL, gf_api_levels_json(lv));
}

int gf_api_tick(struct gf_api *a, int64_t now_ms)
{
	a->now_ms = now_ms;
	int64_t next = gf_api_levels_poll(a);
	struct gf_api_levels lv;
	int have = 0, err = 0;
	struct gf_errbuf eb = {{0}};
	for (unsigned i = 0; i < GF_API_MAX_SUBS; i++) {
		struct gf_api_sub *s = &a->subs[i];
		if (!s->client)
			continue;
		if (now_ms >= s->next_ms) {
			if (!have) { /* one reading serves every subscriber due now */
				memset(&lv, 0, sizeof(lv));
				err = gf_api_levels_plain(a, &lv, &eb);
				have = 1;
			}
			/* On the grid, but never a burst to catch up after a slow pass. */
			s->next_ms += s->interval_ms;
			if (s->next_ms <= now_ms)
				s->next_ms = now_ms + s->interval_ms;
			push_levels(a, s, &lv, err, eb.msg[0] ? eb.msg : gf_strerror(err));
			if (!s->client)
				continue;
		}
		if (next < 0 || s->next_ms - now_ms < next)
			next = s->next_ms - now_ms;
	}
	return (int)next;
}
