/*
 * The live controls of the stages after the FIR over the control API
 * (api_suppress.c), driven through the ops table by the fake daemon: the
 * noise suppressor's (GetSuppressor, SetSuppressor) and the neural stage's
 * (GetNeural, SetNeural), each put through the same cases. For each: the Get
 * object, the Set command with one member or both (the reply is what is in
 * force, and only its stage is reached), every malformed request refused with
 * a message that names the member and nothing reaching the program, the
 * program's refusals typed (a value out of range, 1e308 too, no stage
 * running), -0 read as 0 dB,
 * GetStatus's object, a guest allowed as for the volume and a locked client
 * refused.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_fake.h"
#include "testutil.h"

/* A stage's names in the protocol, its range and a value of dB inside it, for the cases below. */
struct stage {
	enum gf_api_stage_id id;
	const char *get, *set, *key, *db, *max_db, *none;
	double min, max;
};

static const struct stage stages[] = {
	{GF_API_SUPPRESSOR, "GetSuppressor", "SetSuppressor", "suppressor", "depth_db", "max_depth_db",
	 "no noise suppressor", 0.0, 40.0},
	{GF_API_NEURAL, "GetNeural", "SetNeural", "neural", "atten_lim_db", "max_atten_lim_db",
	 "no neural stage", 1.0, 100.0},
};

/* @p v (consumed) is stage @p s's object: @p channels, and with channels its @p bypass and @p db. */
static void check_stage(const struct stage *s, json_t *v, uint32_t channels, int bypass, double db)
{
	CHECK(json_is_object(v));
	CHECK(json_integer_value(json_object_get(v, "channels")) == channels);
	CHECK(json_number_value(json_object_get(v, s->max_db)) == s->max);
	if (!channels) {
		CHECK(json_is_null(json_object_get(v, "bypass")) && json_is_null(json_object_get(v, s->db)));
	} else {
		CHECK(json_is_boolean(json_object_get(v, "bypass")));
		CHECK(json_is_true(json_object_get(v, "bypass")) == bypass);
		CHECK(fabs(json_number_value(json_object_get(v, s->db)) - db) < 1e-9);
	}
	json_decref(v);
}

/* {"<Set>": {MEMBERS}} into @p buf. */
static const char *set_cmd(char *buf, size_t len, const struct stage *s, const char *members)
{
	snprintf(buf, len, "{\"%s\": {%s}}", s->set, members);
	return buf;
}

/* The stage's Get object, then Set's replies, each what is in force; @p f's stage starts unbypassed
 * at @p db0 on @p channels. */
static void test_get_set(struct gf_api *a, struct fake *f, const struct stage *s, uint32_t channels,
			 double db0)
{
	char cmd[256], m[128], get[64];
	int other = f->sets[!s->id]; /* a Set reaches its own stage alone */
	snprintf(get, sizeof(get), "\"%s\"", s->get);
	check_stage(s, ok_value(a, get, s->get), channels, 0, db0);
	check_stage(s, ok_value(a, set_cmd(cmd, sizeof(cmd), s, "\"bypass\": true"), s->set), channels, 1,
		    db0);
	snprintf(m, sizeof(m), "\"%s\": 24", s->db);
	check_stage(s, ok_value(a, set_cmd(cmd, sizeof(cmd), s, m), s->set), channels, 1, 24.0);
	snprintf(m, sizeof(m), "\"bypass\": false, \"%s\": 12.5", s->db);
	check_stage(s, ok_value(a, set_cmd(cmd, sizeof(cmd), s, m), s->set), channels, 0, 12.5);
	CHECK(f->sets[s->id] == 3 && f->sets[!s->id] == other);
	json_t *st = ok_value(a, "\"GetStatus\"", "GetStatus");
	json_t *o = json_object_get(st, s->key);
	json_incref(o);
	check_stage(s, o, channels, 0, 12.5);
	json_decref(st);
}

/* Malformed Set requests: each refused as InvalidValueError naming what is wrong, none reaching the
 * program; an argument that is no object, and none, for want of an object. */
static void malformed(struct gf_api *a, struct fake *f, const struct stage *s)
{
	char bad[][2][128] = {
		{"", "one or both"},
		{"\"bypass\": 1", "\"bypass\" is not true or false"},
		{"\"bypass\": \"yes\"", "\"bypass\" is not true or false"},
		{"\"%s\": \"deep\"", "\"%s\" is not a number of dB"},
		{"\"%s\": null", "\"%s\" is not a number of dB"},
		{"\"depth\": 10", "\"depth\" is not bypass or %s"},
		{"\"bypass\": true, \"x\": 1", "\"x\" is not"},
	};
	char cmd[256], m[128], why[128], bare[64];
	int sets = f->sets[s->id];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(m, sizeof(m), bad[i][0], s->db);
		snprintf(why, sizeof(why), bad[i][1], s->db);
		expect_typed(a, set_cmd(cmd, sizeof(cmd), s, m), s->set, "InvalidValueError", why);
	}
	snprintf(cmd, sizeof(cmd), "{\"%s\": true}", s->set);
	expect_error(a, cmd, s->set, "object");
	snprintf(bare, sizeof(bare), "\"%s\"", s->set);
	expect_error(a, bare, s->set, "object");
	CHECK(f->sets[s->id] == sets); /* none reached the program */
}

/* The program's refusals: a value outside the stage's range, and a Set where the stage does not run;
 * what is in force stays. */
static void test_refusals(struct gf_api *a, struct fake *f, const struct stage *s, uint32_t channels)
{
	char cmd[256], m[128], why[64], get[64];
	malformed(a, f, s);
	snprintf(why, sizeof(why), "outside %g..%g", s->min, s->max);
	snprintf(m, sizeof(m), "\"%s\": %g", s->db, s->max + 1.0);
	expect_typed(a, set_cmd(cmd, sizeof(cmd), s, m), s->set, "InvalidValueError", why);
	snprintf(m, sizeof(m), "\"%s\": %g", s->db, s->min - 1.0);
	expect_typed(a, set_cmd(cmd, sizeof(cmd), s, m), s->set, "InvalidValueError", why);
	snprintf(m, sizeof(m), "\"%s\": 1e308", s->db);
	expect_typed(a, set_cmd(cmd, sizeof(cmd), s, m), s->set, "InvalidValueError", why);
	snprintf(get, sizeof(get), "\"%s\"", s->get);
	check_stage(s, ok_value(a, get, s->get), channels, 0, 12.5); /* unchanged */
	f->stage[s->id].channels = 0;
	check_stage(s, ok_value(a, get, s->get), 0, 0, 0.0);
	expect_typed(a, set_cmd(cmd, sizeof(cmd), s, "\"bypass\": true"), s->set, "InvalidRequestError",
		     s->none);
	f->stage[s->id].channels = channels;
}

/* -0 is 0 dB: within the suppressor's range, and read back without its sign (no "-0.0" in the
 * replies and the status); below the neural stage's. */
static void test_negative_zero(struct gf_api *a, const struct stage *s)
{
	char cmd[256], m[128], why[64];
	snprintf(m, sizeof(m), "\"%s\": -0.0", s->db);
	if (s->min > 0.0) {
		snprintf(why, sizeof(why), "outside %g..%g", s->min, s->max);
		expect_typed(a, set_cmd(cmd, sizeof(cmd), s, m), s->set, "InvalidValueError", why);
		return;
	}
	json_t *v = ok_value(a, set_cmd(cmd, sizeof(cmd), s, m), s->set);
	double db = json_number_value(json_object_get(v, s->db));
	CHECK(db == 0.0 && !signbit(db));
	json_decref(v);
	snprintf(m, sizeof(m), "\"%s\": 12.5", s->db);
	json_decref(ok_value(a, set_cmd(cmd, sizeof(cmd), s, m), s->set));
}

static void *const guest = (void *)30, *const locked = (void *)31;

/* A guest may turn the stage's bypass on; a locked client's bypass off is refused for want of
 * Authenticate. */
static void test_standing(struct gf_api *a, const struct stage *s, uint32_t channels)
{
	char cmd[256], get[64];
	json_t *r = ask(a, guest, set_cmd(cmd, sizeof(cmd), s, "\"bypass\": true"));
	body_of(r, s->set, "Ok");
	json_decref(r);
	gf_api_client_standing(a, locked, GF_API_LOCKED);
	r = ask(a, locked, set_cmd(cmd, sizeof(cmd), s, "\"bypass\": false"));
	CHECK(strstr(json_string_value(json_object_get(body_of(r, s->set, "InvalidRequestError"), "value")),
		     "Authenticate"));
	json_decref(r);
	snprintf(get, sizeof(get), "\"%s\"", s->get);
	check_stage(s, ok_value(a, get, s->get), channels, 1, 12.5);
	gf_api_client_gone(a, guest);
	gf_api_client_gone(a, locked);
}

int main(void)
{
	struct fake f = {.text = "filters = ();\n", .limit = 6.0};
	f.stage[GF_API_SUPPRESSOR] = (struct gf_api_stage){.channels = 2, .db = 15.0, .max_db = 40.0};
	f.stage[GF_API_NEURAL] = (struct gf_api_stage){.channels = 1, .db = 100.0, .max_db = 100.0};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	f.api = a;
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		const struct stage *s = &stages[i];
		uint32_t channels = f.stage[s->id].channels;
		test_get_set(a, &f, s, channels, f.stage[s->id].db);
		test_refusals(a, &f, s, channels);
		test_negative_zero(a, s);
		test_standing(a, s, channels);
	}
	clear();
	gf_api_free(a);
	printf("test_api_suppress: ok\n");
	return 0;
}
