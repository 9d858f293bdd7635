/* libFuzzer entry point: the control API's protocol (src/api), a message of
 * any bytes through gf_api_handle against a fake daemon whose every op
 * answers (the stages' live controls too); slow ops complete at once. Each
 * reply must be one line of JSON. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t pending;
static const char *const names[] = {"a", "b"};

static int st(void *c, struct gf_api_status *s)
{
	s->state = "Running";
	s->filters = names;
	s->n_filters = 2;
	s->signal_peak = 0.5;
	return 0;
}

static int text(void *c, int prev, const char **t, struct gf_errbuf *eb)
{
	*t = prev ? NULL : "filters = ();\n";
	return 0;
}

static int validate(void *c, const char *t, struct gf_errbuf *eb)
{
	return strlen(t) % 2 ? 0 : GF_E_CONFIG;
}

static int set(void *c, const char *t, uint64_t token, struct gf_errbuf *eb)
{
	pending = token;
	return GF_API_PENDING;
}

static int patch(void *c, const char *s, const char *const *k, uint32_t n, uint64_t token,
		 struct gf_errbuf *eb)
{
	pending = token;
	return GF_API_PENDING;
}

static int reload(void *c, uint64_t token, struct gf_errbuf *eb)
{
	pending = token;
	return GF_API_PENDING;
}

static double vol;
static int mute;
static int gv(void *c, double *db, struct gf_errbuf *eb)
{
	*db = vol;
	return 0;
}
static int sv(void *c, double db, struct gf_errbuf *eb)
{
	vol = db;
	return 0;
}
static int gm(void *c, int *m, struct gf_errbuf *eb)
{
	*m = mute;
	return 0;
}
static int sm(void *c, int m, struct gf_errbuf *eb)
{
	mute = m;
	return 0;
}
static int lv(void *c, struct gf_api_levels *l, struct gf_errbuf *eb)
{
	l->n_capture = l->n_playback = 2;
	l->interval_s = 0.01; /* audio for the level history */
	return 0;
}

/* The stages' live controls: one running on two channels, its request taken as it comes (the
 * program's range check is the daemon's), the other not running. */
static struct gf_api_stage stage[GF_API_STAGES] = {{.channels = 2, .db = 15.0, .max_db = 40.0},
						   {.max_db = 100.0}};
static int stage_get(void *c, enum gf_api_stage_id id, struct gf_api_stage *out, struct gf_errbuf *eb)
{
	*out = stage[id];
	return 0;
}

static int stage_set(void *c, enum gf_api_stage_id id, const struct gf_api_stage *q, struct gf_api_stage *out,
		     struct gf_errbuf *eb)
{
	if (q->has_bypass)
		stage[id].bypass = q->bypass;
	if (q->has_db)
		stage[id].db = q->db;
	return stage_get(c, id, out, eb);
}

static void check(void *client, const char *t, size_t len)
{
	if (memchr(t, '\n', len))
		abort();
	json_t *j = json_loadb(t, len, 0, NULL);
	if (!j || !json_is_object(j) || json_object_size(j) != 1)
		abort();
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_api *a;
	if (!a) {
		struct gf_api_ops ops = {.status = st,
					 .config_text = text,
					 .validate_config = validate,
					 .set_config = set,
					 .patch_config = patch,
					 .reload = reload,
					 .get_volume = gv,
					 .set_volume = sv,
					 .get_mute = gm,
					 .set_mute = sm,
					 .levels = lv,
					 .get_stage = stage_get,
					 .set_stage = stage_set};
		if (gf_api_new(&a, &ops) || gf_api_set_key(a, "k0123456789abcdef0123"))
			abort();
	}
	/* every standing: a guest, the owner, a locked client (a WebSocket beyond loopback) */
	if (gf_api_client_standing(a, (void *)1, (enum gf_api_standing)(size % 3)))
		abort();
	pending = 0;
	gf_api_handle(a, (void *)1, check, (const char *)data, size);
	if (pending)
		gf_api_complete(a, pending, size % 2 ? GF_E_CONFIG : 0, "why");
	gf_api_tick(a, (int64_t)size * 10);
	return 0;
}
