/*
 * The live controls of the stages after the FIR (SetSuppressor, SetNeural and
 * their Get commands) against hostile requests, on the real daemon under
 * JACK's dummy driver (docs/api.md, "Noise suppressor", "Neural stage", "What
 * a client may change"). The stream runs a noise suppressor (reduction_db 15)
 * and no neural stage. After every request what is in force is read back from
 * GetSuppressor and from the status socket (suppressor_reduction_db,
 * suppressor_bypass):
 *
 *   1  the owner (the Unix socket): numbers JSON carries that are no depth
 *      (1e308, -1e308, just past either end of the range), the wrong types (a
 *      string, an array, an object, true, null; a number or a string for
 *      bypass), no member, an unknown member, one beside a valid member, a
 *      valid member beside a bad one, an argument that is no object: each an
 *      error naming what is wrong, and nothing changes. A number JSON cannot
 *      hold (1e400, which would be infinite) and a member given twice are not
 *      JSON the API takes (Invalid). -0 is 0 dB, read back as 0.0.
 *   2  SetNeural on this stream, which has no neural stage: the same requests
 *      refused the same way (the range is checked first); a well-formed one
 *      says the stream has no neural stage, and GetNeural 0 channels.
 *   3  a guest (a WebSocket client on loopback, no key): the same refusals; a
 *      well-formed request is served within the range, as its volume is; 200
 *      of them in a row are served without a line of log each (a journal
 *      rate-limits the service as a whole: the flood would drown the daemon's
 *      own warnings).
 *   4  a client beyond loopback without the key (locked): every Get and Set
 *      of both stages refused for want of Authenticate, nothing changes; with
 *      the key it is served. Skipped where the machine has no non-loopback
 *      IPv4 address.
 *   5  the API's depth stays when a reload that changes reduction_db fails
 *      to start its stream (a device that does not exist) and the previous
 *      settings are kept.
 *   6  the suppressor taken out of the chain (PatchConfig, a stream restart):
 *      SetSuppressor says the stream has no noise suppressor, GetSuppressor 0
 *      channels.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiclient.h"
#include "daemonutil.h"
#include "status.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define CH 2

static struct gf_daemon dm;
static struct gf_apiclient api; /* the owner: the daemon's own user on the Unix socket */
static char ctl_path[700];
static int port;

/* A stage's names and range in the protocol. */
struct stage {
	const char *get, *set, *db;
	double min, max;
};

static const struct stage suppressor = {"GetSuppressor", "SetSuppressor", "depth_db", 0.0, 40.0},
			  neural = {"GetNeural", "SetNeural", "atten_lim_db", 1.0, 100.0};

/* A client: the owner's Unix socket, or a WebSocket (fd). */
struct client {
	const char *name;
	int ws; /* -1: the owner's Unix socket */
	char buf[16384];
};

static const char *call(struct client *c, const char *cmd)
{
	if (c->ws < 0)
		return gf_apic_call(&api, cmd);
	c->buf[0] = '\0';
	if (gf_ws_call(c->ws, cmd, c->buf, sizeof(c->buf), 10000) <= 0) {
		printf("%s: %s: no reply\n", c->name, cmd);
		gf_daemon_die(&dm, "no WebSocket reply");
	}
	return c->buf;
}

static void expect(const char *got, const char *want, const char *want2, const char *what)
{
	if (strstr(got, want) && (!want2 || strstr(got, want2)))
		return;
	printf("%s: got %.600s\nwanted: %s%s%s\n", what, got, want, want2 ? " and " : "", want2 ? want2 : "");
	gf_daemon_die(&dm, what);
}

/* What is in force is still @p reply (GetSuppressor's, the owner's), and the status socket's lines say
 * @p depth and @p bypass. */
static void unchanged(const char *reply, const char *depth, const char *bypass, const char *what)
{
	expect(gf_apic_call(&api, "\"GetSuppressor\""), reply, NULL, what);
	char st[GF_STATUS_MAX], line[64];
	gf_daemon_query_status(&dm, st, sizeof(st));
	snprintf(line, sizeof(line), "suppressor_reduction_db: %s\n", depth);
	expect(st, line, NULL, what);
	snprintf(line, sizeof(line), "suppressor_bypass: %s\n", bypass);
	expect(st, line, NULL, what);
	expect(st, "neural: none\n", NULL, what);
}

/* Stage @p s's Set with members @p m (a format: %s the number's member, %.17g twice a number). */
static const char *set_with(struct client *c, const struct stage *s, const char *m, double x)
{
	char members[256], cmd[400];
	snprintf(members, sizeof(members), m, s->db, x);
	snprintf(cmd, sizeof(cmd), "{\"%s\": {%s}}", s->set, members);
	return call(c, cmd);
}

/* Every malformed request of case 1 from @p c to stage @p s: refused with an error naming what is
 * wrong, nothing changed (@p reply, @p depth, @p bypass: what is in force). */
static void refusals(struct client *c, const struct stage *s, const char *reply, const char *depth,
		     const char *bypass)
{
	static const struct {
		const char *members, *type, *why;
		int at; /* the number: 0 none, 1e308 (1), -1e308 (2), just above the range (3), below (4) */
	} bad[] = {
		{"\"%s\": %.17g", "InvalidValueError", "outside", 1},
		{"\"%s\": %.17g", "InvalidValueError", "outside", 2},
		{"\"%s\": %.17g", "InvalidValueError", "outside", 3},
		{"\"%s\": %.17g", "InvalidValueError", "outside", 4},
		{"\"bypass\": true, \"%s\": %.17g", "InvalidValueError", "outside", 1},
		{"\"%s\": \"10\"", "InvalidValueError", "is not a number of dB", 0},
		{"\"%s\": [10]", "InvalidValueError", "is not a number of dB", 0},
		{"\"%s\": {\"dB\": 10}", "InvalidValueError", "is not a number of dB", 0},
		{"\"%s\": true", "InvalidValueError", "is not a number of dB", 0},
		{"\"%s\": null", "InvalidValueError", "is not a number of dB", 0},
		{"\"bypass\": 1", "InvalidValueError", "\\\"bypass\\\" is not true or false", 0},
		{"\"bypass\": \"true\"", "InvalidValueError", "\\\"bypass\\\" is not true or false", 0},
		{"\"bypass\": null", "InvalidValueError", "\\\"bypass\\\" is not true or false", 0},
		{"", "InvalidValueError", "one or both", 0},
		{"\"depth\": 10", "InvalidValueError", "\\\"depth\\\" is not bypass or", 0},
		{"\"%s\": 10, \"extra\": 1", "InvalidValueError", "\\\"extra\\\" is not bypass or", 0},
		{"\"bypass\": true, \"Bypass\": true", "InvalidValueError", "\\\"Bypass\\\" is not", 0},
	};
	char what[160], cmd[128];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double at[] = {0.0, 1e308, -1e308, s->max + 1e-6, s->min - 1e-6};
		const char *r = set_with(c, s, bad[i].members, at[bad[i].at]);
		snprintf(what, sizeof(what), "%s, %s {%s}", c->name, s->set, bad[i].members);
		expect(r, bad[i].type, bad[i].why, what);
		unchanged(reply, depth, bypass, what);
	}
	static const char *const not_object[] = {"\"%s\"", "{\"%s\": 10}", "{\"%s\": [true]}",
						 "{\"%s\": \"bypass\"}", "{\"%s\": null}"};
	for (size_t i = 0; i < sizeof(not_object) / sizeof(not_object[0]); i++) {
		snprintf(cmd, sizeof(cmd), not_object[i], s->set);
		snprintf(what, sizeof(what), "%s, %s", c->name, cmd);
		expect(call(c, cmd), "object", NULL, what);
		unchanged(reply, depth, bypass, what);
	}
	snprintf(cmd, sizeof(cmd), "{\"%s\": {\"%s\": 1e400}}", s->set, s->db);
	expect(call(c, cmd), "{\"Invalid\":{\"error\":\"invalid JSON", NULL, cmd);
	snprintf(cmd, sizeof(cmd), "{\"%s\": {\"%s\": 10, \"%s\": 20}}", s->set, s->db, s->db);
	expect(call(c, cmd), "{\"Invalid\":{\"error\":\"invalid JSON", "duplicate", cmd);
	unchanged(reply, depth, bypass, "after invalid JSON");
	printf("%s: %s: every malformed request refused, nothing changed\n", c->name, s->set);
}

static void case1(struct client *owner, const char *reply)
{
	refusals(owner, &suppressor, reply, "15.0", "no");
	const char *r = gf_apic_call(&api, "{\"SetSuppressor\": {\"depth_db\": -0.0}}");
	expect(r, "\"depth_db\":0.0,", NULL, "-0 read back");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	expect(st, "suppressor_reduction_db: 0.0\n", NULL, "-0 in the status");
	expect(gf_apic_call(&api, "{\"SetSuppressor\": {\"depth_db\": 15}}"), "\"depth_db\":15.0,", NULL,
	       "back to 15 dB");
	unchanged(reply, "15.0", "no", "back to 15 dB");
	printf("case 1: the owner's malformed requests refused; -0 is 0.0\n");
}

static void case2(struct client *owner, const char *reply)
{
	refusals(owner, &neural, reply, "15.0", "no");
	expect(set_with(owner, &neural, "\"bypass\": true", 0.0), "InvalidRequestError", "no neural stage",
	       "SetNeural without the stage");
	expect(gf_apic_call(&api, "\"GetNeural\""), "\"channels\":0,", "\"atten_lim_db\":null", "GetNeural");
	unchanged(reply, "15.0", "no", "SetNeural without the stage");
	printf("case 2: SetNeural on a stream without the stage: refused, says so\n");
}

/* The lines in gpufir's log so far. */
static long log_lines(void)
{
	FILE *f = fopen(dm.log_path, "r");
	long n = 0;
	for (int ch; f && (ch = fgetc(f)) != EOF;)
		n += ch == '\n';
	if (f)
		fclose(f);
	return n;
}

/* FLOOD well-formed requests (the bypass toggled): each served, and the log, which a journal
 * rate-limits for the whole service, does not take a line from each. */
#define FLOOD 200
static void flood(struct client *c)
{
	long before = log_lines();
	for (int i = 0; i < FLOOD; i++)
		expect(call(c, i % 2 ? "{\"SetSuppressor\": {\"bypass\": false}}"
				     : "{\"SetSuppressor\": {\"bypass\": true}}"),
		       "\"result\":\"Ok\"", NULL, "a well-formed request of the flood");
	long grew = log_lines() - before;
	printf("%s: %d well-formed requests, %ld lines of log\n", c->name, FLOOD, grew);
	if (grew >= FLOOD / 10)
		gf_daemon_die(&dm, "a client's well-formed requests each wrote a line to the log");
}

static void case3(const char *reply)
{
	struct client guest = {.name = "guest (WebSocket)", .ws = gf_ws_connect("127.0.0.1", port, 5000)};
	CHECK(guest.ws >= 0);
	refusals(&guest, &suppressor, reply, "15.0", "no");
	refusals(&guest, &neural, reply, "15.0", "no");
	expect(set_with(&guest, &suppressor, "\"%s\": %.17g", 20.0), "\"result\":\"Ok\"", "\"depth_db\":20.0",
	       "a guest's depth within the range");
	unchanged(call(&guest, "\"GetSuppressor\""), "20.0", "no", "a guest's depth");
	expect(gf_apic_call(&api, "{\"SetSuppressor\": {\"depth_db\": 15}}"), "\"depth_db\":15.0,", NULL,
	       "back to 15 dB");
	flood(&guest);
	close(guest.ws);
	printf("case 3: a guest's malformed requests refused; a depth within the range served\n");
}

static void case4(const char *reply)
{
	char addr[64], key[200];
	if (!gf_daemon_wide_address(addr, sizeof(addr))) {
		printf("case 4: no non-loopback IPv4 address: not tried\n");
		return;
	}
	struct client locked = {.name = "locked (beyond loopback)",
				.ws = gf_apic_move_ws(&api, addr, gf_daemon_free_tcp_port())};
	static const char *const cmds[] = {"\"GetSuppressor\"",
					   "\"GetNeural\"",
					   "{\"SetSuppressor\": {\"bypass\": true}}",
					   "{\"SetSuppressor\": {\"depth_db\": 0}}",
					   "{\"SetNeural\": {\"bypass\": true}}",
					   "{\"SetNeural\": {\"atten_lim_db\": 50}}"};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		expect(call(&locked, cmds[i]), "InvalidRequestError", "Authenticate", cmds[i]);
		unchanged(reply, "15.0", "no", cmds[i]);
	}
	gf_daemon_read_key(&dm, key, sizeof(key));
	char *auth = gf_apic_string_cmd("Authenticate", key);
	expect(call(&locked, auth), "{\"Authenticate\":{\"result\":\"Ok\"}}", NULL, "Authenticate");
	free(auth);
	expect(call(&locked, "{\"SetSuppressor\": {\"bypass\": true}}"), "\"bypass\":true", NULL,
	       "SetSuppressor with the key");
	expect(gf_apic_call(&api, "{\"SetSuppressor\": {\"bypass\": false}}"), "\"bypass\":false", NULL,
	       "bypass off again");
	close(locked.ws);
	printf("case 4: on %s, locked until Authenticate: nothing changed; then served\n", addr);
}

/* The config with the suppressor at @p reduction_db on @p device, written in place, or (@p renamed) beside
 * it and renamed over it: the daemon, watching the file, reloads. */
static void write_conf(int renamed, const char *device, double reduction_db)
{
	FILE *f = renamed ? gf_daemon_conf_begin_new(&dm, RATE, 256, "cpu", CH, device)
			  : gf_daemon_conf_begin(&dm, RATE, 256, "cpu", CH, device);
	fprintf(f,
		"control_socket = \"%s\";\ncontrol_port = %d;\ncontrol_key_file = \"%s/control.key\";\n"
		"filters = ( { name = \"id\"; design = \"identity\"; },\n"
		"  { name = \"nr\"; design = \"suppress\"; reduction_db = %.1f; } );\nchain = [\"id\", "
		"\"nr\"];\n",
		ctl_path, port, dm.dir, reduction_db);
	if (renamed)
		gf_daemon_conf_end_new(&dm, f);
	else
		CHECK(fclose(f) == 0);
}

static void case5(void)
{
	expect(gf_apic_call(&api, "{\"SetSuppressor\": {\"depth_db\": 10}}"), "\"depth_db\":10.0,", NULL,
	       "depth 10 over the API");
	write_conf(1, "gpufir-no-such-device", 20.0);
	char st[GF_STATUS_MAX];
	for (int i = 0; i < 300; i++, gf_daemon_idle_ms(&dm, 100)) {
		gf_daemon_query_status(&dm, st, sizeof(st));
		if (strstr(st, "kept the previous settings"))
			break;
	}
	expect(st, "kept the previous settings", NULL, "a restart on a device that does not exist");
	expect(gf_apic_call(&api, "\"GetSuppressor\""), "\"depth_db\":10.0,", NULL,
	       "the API's depth after the failed restart");
	expect(st, "suppressor_reduction_db: 10.0\n", NULL, "the status after the failed restart");
	printf("case 5: a reload of reduction_db whose restart failed: the API's depth kept with the old "
	       "settings\n");
}

static void case6(void)
{
	expect(gf_apic_call(&api, "{\"PatchConfig\": {\"chain\": [\"id\"]}}"),
	       "{\"PatchConfig\":{\"result\":\"Ok\"}}", NULL, "PatchConfig without the suppressor");
	for (int i = 0; i < 300 && !strstr(gf_apic_call(&api, "\"GetSuppressor\""), "\"channels\":0,"); i++)
		gf_daemon_idle_ms(&dm, 100);
	expect(gf_apic_call(&api, "\"GetSuppressor\""), "\"channels\":0,", "\"depth_db\":null",
	       "GetSuppressor");
	expect(gf_apic_call(&api, "{\"SetSuppressor\": {\"depth_db\": 10}}"), "InvalidRequestError",
	       "no noise suppressor", "SetSuppressor without the stage");
	printf("case 6: SetSuppressor on a stream without a suppressor: refused, says so\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "hostile-api-stages");
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	port = gf_daemon_free_tcp_port();
	write_conf(0, "system", 15.0);
	if (gf_jack_server_start(&dm.jack, "gpufir-hstages", RATE, 256) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_apic_init(&api, &dm, ctl_path);
	struct client owner = {.name = "owner (Unix socket)", .ws = -1};
	char reply[512];
	snprintf(reply, sizeof(reply), "%s", gf_apic_call(&api, "\"GetSuppressor\""));
	expect(reply, "\"channels\":2,", "\"depth_db\":15.0,", "GetSuppressor at start");
	unchanged(reply, "15.0", "no", "at start");
	case1(&owner, reply);
	case2(&owner, reply);
	case3(reply);
	case4(reply);
	case5();
	case6();
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	printf("test_hostile_api_stages: ok\n");
	return 0;
}
