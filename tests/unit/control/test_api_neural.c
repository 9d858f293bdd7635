/*
 * The neural stage's live controls over the control API (api_suppress.c),
 * driven through the ops table by the fake daemon: GetNeural's object,
 * SetNeural with one member or both (the reply is what is in force), every
 * malformed request refused with a message that names the member and nothing
 * reaching the program, the program's refusals typed (a limit out of range,
 * no neural stage running), GetStatus's "neural", a guest allowed as for the
 * volume and a locked client refused.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_fake.h"
#include "testutil.h"

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

static void test_get_set(struct gf_api *a, struct fake *f)
{
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 1, 0, 100.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"bypass\": true}}", "SetNeural"), 1, 1, 100.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"atten_lim_db\": 24}}", "SetNeural"), 1, 1, 24.0);
	check_neural(ok_value(a, "{\"SetNeural\": {\"bypass\": false, \"atten_lim_db\": 12.5}}", "SetNeural"),
		     1, 0, 12.5);
	CHECK(f->neural_sets == 3 && f->sup_sets == 0);
	json_t *st = ok_value(a, "\"GetStatus\"", "GetStatus");
	json_t *n = json_object_get(st, "neural");
	json_incref(n);
	check_neural(n, 1, 0, 12.5);
	json_decref(st);
}

static void test_refusals(struct gf_api *a, struct fake *f)
{
	int sets = f->neural_sets;
	expect_typed(a, "{\"SetNeural\": {}}", "SetNeural", "InvalidValueError", "one or both");
	expect_typed(a, "{\"SetNeural\": {\"bypass\": \"yes\"}}", "SetNeural", "InvalidValueError",
		     "\"bypass\" is not true or false");
	expect_typed(a, "{\"SetNeural\": {\"atten_lim_db\": null}}", "SetNeural", "InvalidValueError",
		     "\"atten_lim_db\" is not a number of dB");
	expect_typed(a, "{\"SetNeural\": {\"depth_db\": 10}}", "SetNeural", "InvalidValueError",
		     "\"depth_db\" is not bypass or atten_lim_db");
	expect_typed(a, "{\"SetNeural\": {\"bypass\": true, \"x\": 1}}", "SetNeural", "InvalidValueError",
		     "\"x\" is not");
	expect_error(a, "{\"SetNeural\": 3}", "SetNeural", "object");
	expect_error(a, "\"SetNeural\"", "SetNeural", "object");
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

static void test_standing(struct gf_api *a)
{
	void *guest = (void *)30, *locked = (void *)31;
	json_t *r = ask(a, guest, "{\"SetNeural\": {\"bypass\": true}}");
	body_of(r, "SetNeural", "Ok");
	json_decref(r);
	gf_api_client_standing(a, locked, GF_API_LOCKED);
	r = ask(a, locked, "{\"SetNeural\": {\"bypass\": false}}");
	CHECK(strstr(
		json_string_value(json_object_get(body_of(r, "SetNeural", "InvalidRequestError"), "value")),
		"Authenticate"));
	json_decref(r);
	check_neural(ok_value(a, "\"GetNeural\"", "GetNeural"), 1, 1, 12.5);
	gf_api_client_gone(a, guest);
	gf_api_client_gone(a, locked);
}

int main(void)
{
	struct fake f = {.text = "filters = ();\n",
			 .limit = 6.0,
			 .neural = {.channels = 1, .atten_lim_db = 100.0, .max_atten_lim_db = 100.0}};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	f.api = a;
	test_get_set(a, &f);
	test_refusals(a, &f);
	test_standing(a);
	clear();
	gf_api_free(a);
	printf("test_api_neural: ok\n");
	return 0;
}
