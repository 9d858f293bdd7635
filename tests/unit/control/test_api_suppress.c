/*
 * The noise suppressor's live controls over the control API (api_suppress.c),
 * driven through the ops table by the fake daemon: GetSuppressor's object,
 * SetSuppressor with one member or both (the reply is what is in force),
 * every malformed request refused with a message that names the member and
 * nothing reaching the program, the program's refusals typed (a depth out of
 * range, no suppressor running), GetStatus's "suppressor", a guest allowed as
 * for the volume and a locked client refused.
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

static void test_refusals(struct gf_api *a, struct fake *f)
{
	int sets = f->sup_sets;
	expect_typed(a, "{\"SetSuppressor\": {}}", "SetSuppressor", "InvalidValueError", "one or both");
	expect_typed(a, "{\"SetSuppressor\": {\"bypass\": 1}}", "SetSuppressor", "InvalidValueError",
		     "\"bypass\" is not true or false");
	expect_typed(a, "{\"SetSuppressor\": {\"depth_db\": \"deep\"}}", "SetSuppressor", "InvalidValueError",
		     "\"depth_db\" is not a number of dB");
	expect_typed(a, "{\"SetSuppressor\": {\"depth\": 10}}", "SetSuppressor", "InvalidValueError",
		     "\"depth\" is not bypass or depth_db");
	expect_typed(a, "{\"SetSuppressor\": {\"depth_db\": 10, \"x\": 1}}", "SetSuppressor",
		     "InvalidValueError", "\"x\" is not");
	expect_error(a, "{\"SetSuppressor\": true}", "SetSuppressor", "object");
	expect_error(a, "\"SetSuppressor\"", "SetSuppressor", "object");
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

static void test_standing(struct gf_api *a)
{
	void *guest = (void *)30, *locked = (void *)31;
	json_t *r = ask(a, guest, "{\"SetSuppressor\": {\"bypass\": true}}");
	body_of(r, "SetSuppressor", "Ok");
	json_decref(r);
	gf_api_client_standing(a, locked, GF_API_LOCKED);
	r = ask(a, locked, "{\"SetSuppressor\": {\"bypass\": false}}");
	CHECK(strstr(json_string_value(
			     json_object_get(body_of(r, "SetSuppressor", "InvalidRequestError"), "value")),
		     "Authenticate"));
	json_decref(r);
	check_suppressor(ok_value(a, "\"GetSuppressor\"", "GetSuppressor"), 2, 1, 12.5);
	gf_api_client_gone(a, guest);
	gf_api_client_gone(a, locked);
}

int main(void)
{
	struct fake f = {.text = "filters = ();\n",
			 .limit = 6.0,
			 .sup = {.channels = 2, .depth_db = 15.0, .max_depth_db = 40.0}};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	f.api = a;
	test_get_set(a, &f);
	test_refusals(a, &f);
	test_standing(a);
	clear();
	gf_api_free(a);
	printf("test_api_suppress: ok\n");
	return 0;
}
