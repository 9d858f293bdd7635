/*
 * Who sent a command (docs/api.md, "What a client may change"): each client
 * has a standing, set by its transport when it connects and raised by
 * `Authenticate` with the control key. The daemon asks for the caller's
 * standing inside an op (gf_api_caller_is_owner) and applies its policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"

static struct gf_api_standing_slot *slot_of(struct gf_api *a, void *client, int make)
{
	struct gf_api_standing_slot *free_slot = NULL;
	for (unsigned i = 0; i < GF_API_MAX_STANDING; i++) {
		if (a->standing[i].client == client)
			return &a->standing[i];
		if (!a->standing[i].client && !free_slot)
			free_slot = &a->standing[i];
	}
	if (make && free_slot)
		*free_slot = (struct gf_api_standing_slot){.client = client};
	return make ? free_slot : NULL;
}

int gf_api_client_standing(struct gf_api *a, void *client, enum gf_api_standing s)
{
	struct gf_api_standing_slot *sl = slot_of(a, client, s != GF_API_GUEST);
	if (sl && s == GF_API_GUEST)
		*sl = (struct gf_api_standing_slot){0}; /* a guest is what a client without a slot is */
	else if (sl)
		sl->standing = s;
	return sl || s == GF_API_GUEST ? 0 : GF_E_BUSY;
}

enum gf_api_standing gf_api_standing_of(struct gf_api *a, void *client)
{
	struct gf_api_standing_slot *sl = slot_of(a, client, 0);
	return sl ? sl->standing : GF_API_GUEST;
}

void gf_api_standing_gone(struct gf_api *a, void *client)
{
	struct gf_api_standing_slot *sl = slot_of(a, client, 0);
	if (sl) /* its standing too: a free slot is what a lookup of the NULL client finds */
		*sl = (struct gf_api_standing_slot){0};
}

int gf_api_set_key(struct gf_api *a, const char *key)
{
	if (key && strlen(key) >= sizeof(a->key))
		return GF_E_INVAL;
	memset(a->key, 0, sizeof(a->key));
	if (key)
		memcpy(a->key, key, strlen(key));
	return 0;
}

int gf_api_caller_is_owner(const struct gf_api *a)
{
	return a->caller_owner;
}

/* Every byte compared, whatever the first difference: the time says nothing of the key. */
static int key_equal(const char *key, const char *given)
{
	size_t n = strlen(key), m = strlen(given);
	unsigned char d = (unsigned char)(n != m);
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(key[i] ^ given[i < m ? i : 0]);
	return d == 0;
}

int gf_api_c_authenticate(struct gf_api_req *r, json_t **value, struct gf_errbuf *eb)
{
	(void)value;
	const char *given = json_string_value(r->arg);
	if (!r->a->key[0]) {
		gf_errbuf_set(eb, "this daemon has no control key (control_key_file)");
		return GF_E_INVAL;
	}
	if (!key_equal(r->a->key, given)) {
		gf_errbuf_set(eb, "wrong control key");
		return GF_E_INVAL;
	}
	struct gf_api_standing_slot *sl = slot_of(r->a, r->client, 1);
	if (!sl) {
		gf_errbuf_set(eb, "too many clients to remember this one's key");
		return GF_E_BUSY;
	}
	sl->standing = GF_API_OWNER;
	return 0;
}

int gf_api_may_run(struct gf_api *a, void *client, const char *cmd, char *why, size_t len)
{
	if (gf_api_standing_of(a, client) != GF_API_LOCKED || strcmp(cmd, "Authenticate") == 0 ||
	    strcmp(cmd, "GetVersion") == 0)
		return 1;
	snprintf(why, len,
		 "this control API listens beyond loopback: send {\"Authenticate\": KEY} with the "
		 "control key first");
	return 0;
}
