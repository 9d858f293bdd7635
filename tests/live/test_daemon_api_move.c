/*
 * A command that moves the control API's or the status socket (docs/api.md,
 * "Moving the sockets"), against the real `gpufir --live` under JACK's dummy
 * driver:
 *
 *   1  PatchConfig control_socket = an existing regular file: an Error naming
 *      control_socket at once, the file untouched, the Unix socket and the
 *      WebSocket still answer (they vanished, with no reply, until SIGHUP)
 *   2  PatchConfig status_socket = a regular file: an Error naming
 *      status_socket, and the status socket still answers (it was `Ok` and
 *      the socket silently gone)
 *   3  PatchConfig control_socket = a new path, over the Unix socket: the
 *      requester gets its Ok (it was dropped with no reply), then the new
 *      path answers and the old one is gone
 *   4  PatchConfig control_port = another port, over the WebSocket (after
 *      Authenticate with the control key: a WebSocket client is not the
 *      owner otherwise): its Ok comes before the move, then the new port
 *      answers
 *   5  the config file edited to put control_socket and status_socket on a
 *      regular file, then SIGHUP: the reload goes through, both sockets stay
 *      where they were and answer (the file reload bound nothing and dropped
 *      them until the next SIGHUP)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "apiclient.h"
#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "status.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define PERIOD 256
#define CH 2

static struct gf_daemon dm;
static char ctl_path[700], ctl_path2[700], plain[700];
static int port;
static struct gf_apiclient api;

static void setup(void)
{
	float taps[8] = {1.0f};
	gf_daemon_init(&dm, "daemon-api-move");
	gf_daemon_write_taps_text(&dm, "taps.txt", taps, 8);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	snprintf(ctl_path2, sizeof(ctl_path2), "%s/control2", dm.dir);
	snprintf(plain, sizeof(plain), "%s/plain.txt", dm.dir);
	free(gf_test_write_text_in(dm.dir, "plain.txt", "keep\n"));
	gf_apic_init(&api, &dm, ctl_path);
	port = gf_daemon_free_tcp_port();
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f,
		"crossfade_ms = 5.0;\ncontrol_socket = \"%s\";\ncontrol_port = %d;\n"
		"control_key_file = \"%s/control.key\";\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n",
		ctl_path, port, dm.dir);
	CHECK(fclose(f) == 0);
}

static const char *patch(const char *key, const char *value)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "{\"PatchConfig\": {\"%s\": %s}}", key, value);
	return gf_apic_call(&api, cmd);
}

static void ws_alive(int p, const char *what)
{
	char buf[4096];
	/* a move follows the reply: the new port may need a moment */
	int ws = -1;
	for (double end = gf_now_s() + 5.0; ws < 0 && gf_now_s() < end; gf_daemon_idle_ms(&dm, 50))
		ws = gf_ws_connect("127.0.0.1", p, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, what);
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0);
	gf_apic_expect(&api, buf, "\"GetState\":{\"result\":\"Ok\"", what);
	close(ws);
}

static void refuse_regular_files(void)
{
	char v[800];
	snprintf(v, sizeof(v), "\"%s\"", plain);
	gf_apic_expect(&api, patch("control_socket", v),
		       "{\"PatchConfig\":{\"result\":{\"ConfigValidationError\"",
		       "case 1: control_socket on a regular file");
	gf_apic_expect(&api, api.reply, "control_socket: cannot listen at", "case 1: the setting named");
	char buf[16] = "";
	CHECK(gf_test_read_file(plain, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "keep\n") == 0);
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetState\""), "Running", "case 1: the Unix socket stays");
	ws_alive(port, "case 1: the WebSocket stays");
	printf("case 1 (control_socket on a regular file): refused, both transports answer\n");

	gf_apic_expect(&api, patch("status_socket", v),
		       "{\"PatchConfig\":{\"result\":{\"ConfigValidationError\"",
		       "case 2: status_socket on a regular file");
	gf_apic_expect(&api, api.reply, "status_socket: cannot listen at", "case 2: the setting named");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(gf_daemon_status_num(st, "taps") == 8);
	printf("case 2 (status_socket on a regular file): refused, the status socket answers\n");
}

static void move_unix(void)
{
	char v[800];
	snprintf(v, sizeof(v), "\"%s\"", ctl_path2);
	gf_apic_expect(&api, patch("control_socket", v), "{\"PatchConfig\":{\"result\":\"Ok\"}}",
		       "case 3: the requester's reply before the move");
	snprintf(api.path, sizeof(api.path), "%s", ctl_path2);
	double end = gf_now_s() + 5.0;
	/* the old path goes, then the new one is bound, in one pass of the daemon's loop: a look
	 * between the two sees neither */
	while ((gf_test_exists(ctl_path) || !gf_test_exists(ctl_path2)) && gf_now_s() < end)
		gf_daemon_idle_ms(&dm, 20);
	CHECK(!gf_test_exists(ctl_path));
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetState\""), "Running", "case 3: the new socket");
	printf("case 3 (control_socket moved): Ok to the requester, the new path answers\n");
}

static void move_ws(void)
{
	int port2 = gf_daemon_free_tcp_port();
	char cmd[256], buf[4096];
	snprintf(cmd, sizeof(cmd), "{\"PatchConfig\": {\"control_port\": %d}}", port2);
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, "case 4: no WebSocket");
	char key[200];
	gf_daemon_read_key(&dm, key, sizeof(key));
	char *auth = gf_apic_string_cmd("Authenticate", key);
	CHECK(gf_ws_call(ws, auth, buf, sizeof(buf), 5000) > 0);
	free(auth);
	gf_apic_expect(&api, buf, "{\"Authenticate\":{\"result\":\"Ok\"}}", "case 4: Authenticate");
	long n = gf_ws_call(ws, cmd, buf, sizeof(buf), 20000);
	if (n <= 0)
		gf_daemon_die(&dm, "case 4: no reply to the WebSocket's PatchConfig");
	gf_apic_expect(&api, buf, "{\"PatchConfig\":{\"result\":\"Ok\"}}", "case 4: the reply");
	close(ws);
	ws_alive(port2, "case 4: the new port");
	printf("case 4 (control_port moved over the WebSocket): Ok first, the new port answers\n");
}

static void reload_file_onto_plain(void)
{
	long before = (long)gf_apic_num(gf_apic_call(&api, "\"GetCounters\""), "reloads");
	char status_path[sizeof(dm.status_path)];
	snprintf(status_path, sizeof(status_path), "%s", dm.status_path);
	CHECK(strlen(plain) < sizeof(dm.status_path));
	memcpy(dm.status_path, plain, strlen(plain) + 1); /* the config's status_socket */
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	snprintf(dm.status_path, sizeof(dm.status_path), "%s", status_path);
	fprintf(f,
		"crossfade_ms = 5.0;\ncontrol_socket = \"%s\";\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n",
		plain);
	CHECK(fclose(f) == 0);
	CHECK(kill(dm.pid, SIGHUP) == 0);
	/* The reload binds the old path again where the new one cannot be: a call that lands while
	 * it does is dropped (docs/api.md, "Moving the sockets"), so the polling calls may fail. */
	double end = gf_now_s() + 10.0;
	for (;;) {
		char *r = NULL;
		struct gf_errbuf eb = {{0}};
		int done = gf_api_call(api.path, "\"GetCounters\"", &r, 2000, &eb) == 0 &&
			   gf_apic_num(r, "reloads") > before;
		free(r);
		if (done || gf_now_s() >= end)
			break;
		gf_daemon_idle_ms(&dm, 50);
	}
	CHECK(gf_apic_num(gf_apic_call(&api, "\"GetCounters\""), "reloads") > before);
	CHECK(gf_apic_num(api.reply, "reload_failures") == 0);
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetState\""), "\"result\":\"Ok\"",
		       "case 5: the control socket stays");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(gf_daemon_status_num(st, "taps") == 8);
	char buf[16] = "";
	CHECK(gf_test_read_file(plain, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "keep\n") == 0);
	printf("case 5 (SIGHUP onto a regular file): both sockets stay and answer\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	setup();
	if (gf_jack_server_start(&dm.jack, "gpufir-move", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	if (!getenv("ONLY5")) {
		refuse_regular_files();
		move_unix();
		move_ws();
	}
	reload_file_onto_plain();
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	printf("test_daemon_api_move: ok\n");
	return 0;
}
