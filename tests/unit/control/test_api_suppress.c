/*
 * The live controls of the stages after the FIR over the control API
 * (api_suppress.c), driven through the ops table by the fake daemon: the
 * noise suppressor's (GetSuppressor, SetSuppressor) and the neural stage's
 * (GetNeural, SetNeural). For each: the Get object, the Set command with one
 * member or both (the reply is what is in force), every malformed request
 * refused with a message that names the member and nothing reaching the
 * program, the program's refusals typed (a value out of range, no stage
 * running), GetStatus's object, a guest allowed as for the volume and a
 * locked client refused.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_fake.h"
#include "testutil.h"

static void check_suppressor(json_t *v, uint32_t channels, int bypass, double depth_db)
{
	CHECK(json_is_object(v));
	CHECK(json_integer_value(json_object_get(v, "channels")) == channels);
	CHECK(json_number_value(json_object_get(v, "max_depth_db")) == 40.0);
	if (!channels) {
		CHECK(json_is_null(json_object_get(v, "bypass")) &&
		      json_is_null(json_object_get(v, "depth_db")));
	} else {
		CHECK(json_is_boolean(json_object_get(v, "bypass")));
		CHECK(json_is_true(json_object_get(v, "bypass")) == bypass);
		CHECK(fabs(json_number_value(json_object_get(v, "depth_db")) - depth_db) < 1e-9);
	}
	json_decref(v);
}

static void test_get_set(struct gf_api *a, struct fake *f)
{
	check_suppressor(ok_value(a, "\"GetSuppressor\"", "GetSuppressor"), 2, 0, 15.0);
	check_suppressor(ok_value(a, "{\"SetSuppressor\": {\"bypass\": true}}", "SetSuppressor"), 2, 1, 15.0);
	check_suppressor(ok_value(a, "{\"SetSuppressor\": {\"depth_db\": 25}}", "SetSuppressor"), 2, 1, 25.0);
	check_suppressor(
		ok_value(a, "{\"SetSuppressor\": {\"bypass\": false, \"depth_db\": 12.5}}", "SetSuppressor"),
		2, 0, 12.5);
	CHECK(f->sup_sets == 3);
	json_t *st = ok_value(a, "\"GetStatus\"", "GetStatus");
	json_t *s = json_object_get(st, "suppressor");
	json_incref(s);
	check_suppressor(s, 2, 0, 12.5);
	json_decref(st);
}

/* Each of @p n requests @p bad (a request, the words its refusal must have) is refused as
 * InvalidValueError; @p not_object, and @p name with no argument, for want of an object. */
static void malformed(struct gf_api *a, const char *name, const char *const bad[][2], size_t n,
		      const char *not_object)
{
	char bare[64];
	for (size_t i = 0; i < n; i++)
		expect_typed(a, bad[i][0], name, "InvalidValueError", bad[i][1]);
	expect_error(a, not_object, name, "object");
	snprintf(bare, sizeof(bare), "\"%s\"", name);
	expect_error(a, bare, name, "object");
}

static void test_refusals(struct gf_api *a, struct fake *f)
{
	int sets = f->sup_sets;
	static const char *const bad[][2] = {
		{"{\"SetSuppressor\": {}}", "one or both"},
		{"{\"SetSuppressor\": {\"bypass\": 1}}", "\"bypass\" is not true or false"},
		{"{\"SetSuppressor\": {\"depth_db\": \"deep\"}}", "\"depth_db\" is not a number of dB"},
		{"{\"SetSuppressor\": {\"depth\": 10}}", "\"depth\" is not bypass or depth_db"},
		{"{\"SetSuppressor\": {\"depth_db\": 10, \"x\": 1}}", "\"x\" is not"},
	};
	malformed(a, "SetSuppressor", bad, sizeof(bad) / sizeof(bad[0]), "{\"SetSuppressor\": true}");
	CHECK(f->sup_sets == sets); /* none reached the program */
	expect_typed(a, "{\"SetSuppressor\": {\"depth_db\": 41}}", "SetSuppressor", "InvalidValueError",
		     "outside 0..40");
	expect_typed(a, "{\"SetSuppressor\": {\"depth_db\": -1}}", "SetSuppressor", "InvalidValueError",
		     "outside 0..40");
	check_suppressor(ok_value(a, "\"GetSuppressor\"", "GetSuppressor"), 2, 0, 12.5); /* unchanged */
	f->sup.channels = 0;
	check_suppressor(ok_value(a, "\"GetSuppressor\"", "GetSuppressor"), 0, 0, 0.0);
	expect_typed(a, "{\"SetSuppressor\": {\"bypass\": true}}", "SetSuppressor", "InvalidRequestError",
		     "no noise suppressor");
	f->sup.channels = 2;
}

static void check_neural(json_t *v, uint32_t channels, int bypass, double atten_lim_db)
{
	CHECK(json_is_object(v));
	CHECK(json_integer_value(json_object_get(v, "channels")) == channels);
	CHECK(json_number_value(json_object_get(v, "max_atten_lim_db")) == 100.0);
	if (!channels) {
		CHECK(json_is_null(json_object_get(v, "bypass")) &&
		      json_is_null(json_object_get(v, "atten_lim_db")));
	} else {
		CHECK(json_is_boolean(json_object_get(v, "bypass")));
		CHECK(json_is_true(json_object_get(v, "bypass")) == bypass);
		CHECK(fabs(json_number_value(json_object_get(v, "atten_lim_db")) - atten_lim_db) < 1e-9);
	}
	json_decref(v);
}

static void test_neural_get_set(struct gf_api *a, struct fake *f)
{
	int sup_sets = f->sup_sets; /* SetNeural reaches the neural stage alone */
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 1, 0, 100.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"bypass\": true}}", "SetNeural"), 1, 1, 100.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"atten_lim_db\": 24}}", "SetNeural"), 1, 1, 24.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"bypass\": false, \"atten_lim_db\": 12.5}}", "SetNeural"),
		     1, 0, 12.5);
	CHECK(f->neural_sets == 3 && f->sup_sets == sup_sets);
	json_t *st = ok_value(a, "\"GetStatus\"", "GetStatus");
	json_t *n = json_object_get(st, "neural");
	json_incref(n);
	check_neural(n, 1, 0, 12.5);
	json_decref(st);
}

static void test_neural_refusals(struct gf_api *a, struct fake *f)
{
	int sets = f->neural_sets;
	static const char *const bad[][2] = {
		{"{\"SetNeural\": {}}", "one or both"},
		{"{\"SetNeural\": {\"bypass\": \"yes\"}}", "\"bypass\" is not true or false"},
		{"{\"SetNeural\": {\"atten_lim_db\": null}}", "\"atten_lim_db\" is not a number of dB"},
		{"{\"SetNeural\": {\"depth_db\": 10}}", "\"depth_db\" is not bypass or atten_lim_db"},
		{"{\"SetNeural\": {\"bypass\": true, \"x\": 1}}", "\"x\" is not"},
	};
	malformed(a, "SetNeural", bad, sizeof(bad) / sizeof(bad[0]), "{\"SetNeural\": 3}");
	CHECK(f->neural_sets == sets); /* none reached the program */
	expect_typed(a, "{\"SetNeural\": {\"atten_lim_db\": 101}}", "SetNeural", "InvalidValueError",
		     "outside 1..100");
	expect_typed(a, "{\"SetNeural\": {\"atten_lim_db\": 0}}", "SetNeural", "InvalidValueError",
		     "outside 1..100");
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 1, 0, 12.5); /* unchanged */
	f->neural.channels = 0;
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 0, 0, 0.0);
	expect_typed(a, "{\"SetNeural\": {\"bypass\": true}}", "SetNeural", "InvalidRequestError",
		     "no neural stage");
	f->neural.channels = 1;
}

static void *const guest = (void *)30, *const locked = (void *)31;

/* A guest may send @p set (a Set command of @p name that turns bypass on); a locked client's @p unset
 * (bypass off) is refused for want of Authenticate. */
static void standing(struct gf_api *a, const char *name, const char *set, const char *unset)
{
	json_t *r = ask(a, guest, set);
	body_of(r, name, "Ok");
	json_decref(r);
	gf_api_client_standing(a, locked, GF_API_LOCKED);
	r = ask(a, locked, unset);
	CHECK(strstr(json_string_value(json_object_get(body_of(r, name, "InvalidRequestError"), "value")),
		     "Authenticate"));
	json_decref(r);
}

static void test_standing(struct gf_api *a)
{
	standing(a, "SetSuppressor", "{\"SetSuppressor\": {\"bypass\": true}}",
		 "{\"SetSuppressor\": {\"bypass\": false}}");
	check_suppressor(ok_value(a, "\"GetSuppressor\"", "GetSuppressor"), 2, 1, 12.5);
	standing(a, "SetNeural", "{\"SetNeural\": {\"bypass\": true}}",
		 "{\"SetNeural\": {\"bypass\": false}}");
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 1, 1, 12.5);
	gf_api_client_gone(a, guest);
	gf_api_client_gone(a, locked);
}

int main(void)
{
	struct fake f = {.text = "filters = ();\n",
			 .limit = 6.0,
			 .sup = {.channels = 2, .depth_db = 15.0, .max_depth_db = 40.0},
			 .neural = {.channels = 1, .atten_lim_db = 100.0, .max_atten_lim_db = 100.0}};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	f.api = a;
	test_get_set(a, &f);
	test_refusals(a, &f);
	test_neural_get_set(a, &f);
	test_neural_refusals(a, &f);
	test_standing(a);
	clear();
	gf_api_free(a);
	printf("test_api_suppress: ok\n");
	return 0;
}
