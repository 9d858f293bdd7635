/*
 * What a second, unprivileged local user may change through the control API
 * (docs/api.md, "What a client may change"), against the real daemon under
 * JACK's dummy driver. The daemon runs as root with umask 0, so that user
 * (nobody, 65534) may connect to its Unix socket; the WebSocket listens on
 * loopback. A root-only (0600) file with a token in it lies outside the
 * config's folder. The user, over the Unix socket:
 *
 *   1  may read the state and change an ordinary setting (crossfade_ms)
 *   2  SetConfig with @include "../<secret dir>/secret.conf": an Error naming
 *      @include, no token in it nor in GetConfig after (the daemon read the
 *      file and GetConfig returned its settings)
 *   3  PatchConfig control_address "0.0.0.0", max_taps 6000000, output.file,
 *      status_socket: each an Error naming the setting (each was applied:
 *      the API open to the network, 5.8 M taps, a file written anywhere)
 *   4  Authenticate with a wrong key: Error; with the key from the key file
 *      (made by the daemon at start, mode 0600): Ok, and max_taps may then be
 *      raised
 *
 * and over the WebSocket, SetConfig with the absolute include and PatchConfig
 * control_address are refused the same way. The daemon's own user (root,
 * over the Unix socket) is the owner: its PatchConfig of max_taps is
 * applied. Then the owner moves the WebSocket to this machine's first
 * non-loopback IPv4 address (that part skipped where there is none): a
 * client there gets an Error for GetState until it authenticates, GetVersion
 * meanwhile, and GetState after. The daemon runs throughout. Needs root:
 * skipped (77) otherwise.
 */
#include <arpa/inet.h>
#define _GNU_SOURCE /* setgroups */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apiclient.h"
#include "daemonutil.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define CH 2
#define NOBODY 65534

static struct gf_daemon dm;
static char ctl_path[700], secret_dir[64] = "/tmp/gpufir-secret-XXXXXX", key[200];
static char *conf_text;
static int port;

/* ---- the unprivileged child: a failed expectation ends it with 1 ------------------------ */

static int unix_open(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, ctl_path, strlen(ctl_path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("child: cannot connect to %s: %s\n", ctl_path, strerror(errno));
		_exit(1);
	}
	return fd;
}

/* One command over a kept connection (a key given on it holds for it), its reply line. */
static const char *unix_call(int fd, const char *cmd)
{
	static char buf[65536];
	size_t n = 0;
	if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0)
		return "";
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n + 1 < sizeof(buf) && poll(&p, 1, 20000) == 1) {
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	return buf;
}

static void want(const char *got, const char *what, const char *a, const char *b)
{
	int ok = strstr(got, a) && (!b || strstr(got, b)) && !strstr(got, "TOKEN");
	printf("child: %s: %s -> %.300s\n", what, ok ? "ok" : "WRONG", got);
	if (!ok)
		_exit(1);
}

static char *string_cmd(const char *cmd, const char *text)
{
	return gf_apic_string_cmd(cmd, text);
}

static void child_unix(void)
{
	int fd = unix_open();
	want(unix_call(fd, "\"GetState\""), "case 1: GetState", "Running", NULL);
	want(unix_call(fd, "{\"PatchConfig\": {\"crossfade_ms\": 7.5}}"), "case 1: crossfade_ms",
	     "{\"PatchConfig\":{\"result\":\"Ok\"}}", NULL);
	char *text = malloc(strlen(conf_text) + 200);
	sprintf(text, "@include \"..%s/secret.conf\"\n%s", secret_dir, conf_text);
	char *cmd = string_cmd("SetConfig", text);
	want(unix_call(fd, cmd), "case 2: SetConfig with @include ../",
	     "\"result\":{\"ConfigValidationError\"", "@include");
	free(cmd);
	free(text);
	want(unix_call(fd, "\"GetConfig\""), "case 2: GetConfig after", "\"result\":\"Ok\"", NULL);
	want(unix_call(fd, "{\"PatchConfig\": {\"control_address\": \"0.0.0.0\"}}"),
	     "case 3: control_address", "\"result\":{\"ConfigValidationError\"", "control_address");
	want(unix_call(fd, "{\"PatchConfig\": {\"max_taps\": 6000000}}"), "case 3: max_taps",
	     "\"result\":{\"ConfigValidationError\"", "max_taps");
	want(unix_call(fd, "{\"PatchConfig\": {\"output\": {\"device\": \"system\", \"host_api\": \"JACK\", "
			   "\"file\": \"/tmp/gpufir-anywhere.wav\"}}}"),
	     "case 3: output.file", "\"result\":{\"ConfigValidationError\"", "output.file");
	want(unix_call(fd, "{\"PatchConfig\": {\"status_socket\": \"/tmp/gpufir-elsewhere\"}}"),
	     "case 3: status_socket", "\"result\":{\"ConfigValidationError\"", "status_socket");
	want(unix_call(fd, "{\"Authenticate\": \"0123456789abcdef0123\"}"), "case 4: a wrong key",
	     "\"result\":{\"InvalidValueError\"", "wrong control key");
	cmd = string_cmd("Authenticate", key);
	want(unix_call(fd, cmd), "case 4: the key", "{\"Authenticate\":{\"result\":\"Ok\"}}", NULL);
	free(cmd);
	want(unix_call(fd, "{\"PatchConfig\": {\"max_taps\": 200000}}"), "case 4: max_taps with the key",
	     "{\"PatchConfig\":{\"result\":\"Ok\"}}", NULL);
	close(fd);
}

static void child_ws(void)
{
	char buf[65536];
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		_exit(1);
	char *text = malloc(strlen(conf_text) + 200);
	sprintf(text, "@include \"%s/secret.conf\"\n%s", secret_dir, conf_text);
	char *cmd = string_cmd("SetConfig", text);
	buf[0] = '\0';
	gf_ws_call(ws, cmd, buf, sizeof(buf), 20000);
	want(buf, "WebSocket: SetConfig with an absolute @include", "\"result\":{\"ConfigValidationError\"",
	     "@include");
	free(cmd);
	free(text);
	buf[0] = '\0';
	gf_ws_call(ws, "{\"PatchConfig\": {\"control_address\": \"0.0.0.0\"}}", buf, sizeof(buf), 20000);
	want(buf, "WebSocket: control_address", "\"result\":{\"ConfigValidationError\"", "control_address");
	close(ws);
}

static int child(void)
{
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0 || setuid(0) == 0) {
		printf("child: cannot drop to uid %d: %s\n", NOBODY, strerror(errno));
		return 2;
	}
	child_unix();
	child_ws();
	return 0;
}

/* ---- the daemon's side ------------------------------------------------------------------ */

static void setup(void)
{
	float h[32] = {1.0f};
	gf_daemon_init(&dm, "hostile-api-policy");
	CHECK(chmod(dm.dir, 0755) == 0);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, 32);
	CHECK(mkdtemp(secret_dir) != NULL);
	char *secret = gf_test_write_text_in(secret_dir, "secret.conf", "token = \"TOKEN-s3cr3t\";\n");
	CHECK(chmod(secret, 0600) == 0);
	free(secret);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	port = gf_daemon_free_tcp_port();
	FILE *f = gf_daemon_conf_begin(&dm, RATE, 256, "cpu", CH, "system");
	fprintf(f,
		"control_socket = \"%s\";\ncontrol_port = %d;\ncontrol_key_file = \"%s/control.key\";\n"
		"max_taps = 100000;\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\nchain = "
		"[\"f\"];\n",
		ctl_path, port, dm.dir);
	CHECK(fclose(f) == 0);
	conf_text = malloc(8192);
	long n = gf_test_read_file(dm.conf_path, conf_text, 8191);
	CHECK(n > 0);
	conf_text[n] = '\0';
}

static void read_key(void)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/control.key", dm.dir);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	gf_daemon_read_key(&dm, key, sizeof(key));
	printf("control key made at start: %s, mode %04o\n", path, (unsigned)(st.st_mode & 0777));
}

/* The WebSocket beyond loopback: nothing but GetVersion and Authenticate before the key. */
static void beyond_loopback(struct gf_apiclient *api)
{
	char addr[64], buf[4096];
	if (!gf_daemon_wide_address(addr, sizeof(addr))) {
		printf("no non-loopback IPv4 address: the WebSocket beyond loopback is not tried\n");
		return;
	}
	int ws = gf_apic_move_ws(api, addr, gf_daemon_free_tcp_port());
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0);
	gf_apic_expect(api, buf, "Authenticate", "GetState before the key, beyond loopback");
	CHECK(strstr(buf, "\"result\":{\"InvalidRequestError\""));
	CHECK(gf_ws_call(ws, "\"GetVersion\"", buf, sizeof(buf), 5000) > 0);
	gf_apic_expect(api, buf, "{\"GetVersion\":{\"result\":\"Ok\"", "GetVersion before the key");
	char *auth = gf_apic_string_cmd("Authenticate", key);
	CHECK(gf_ws_call(ws, auth, buf, sizeof(buf), 5000) > 0);
	free(auth);
	gf_apic_expect(api, buf, "{\"Authenticate\":{\"result\":\"Ok\"}}", "Authenticate beyond loopback");
	CHECK(gf_ws_call(ws, "\"GetState\"", buf, sizeof(buf), 5000) > 0);
	gf_apic_expect(api, buf, "{\"GetState\":{\"result\":\"Ok\"", "GetState after the key");
	close(ws);
	printf("WebSocket on %s: locked until Authenticate, then served\n", addr);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (geteuid() != 0)
		gf_test_skip("not root: cannot run a second, unprivileged user");
	const char *bin = gf_daemon_test_bin(0);
	setup();
	if (gf_jack_server_start(&dm.jack, "gpufir-hpolicy", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	mode_t old = umask(0); /* the socket open to every local user: the policy is all that is left */
	gf_daemon_spawn(&dm, bin, 0);
	umask(old);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	read_key();
	int ws = gf_test_fork_wait(child);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		gf_daemon_die(&dm, WIFEXITED(ws) && WEXITSTATUS(ws) == 2
					   ? "could not drop privileges"
					   : "the unprivileged user got through");
	struct gf_apiclient api;
	gf_apic_init(&api, &dm, ctl_path);
	gf_apic_expect(&api, gf_apic_call(&api, "{\"PatchConfig\": {\"max_taps\": 300000}}"),
		       "{\"PatchConfig\":{\"result\":\"Ok\"}}", "the owner's PatchConfig of max_taps");
	/* max_taps restarts the stream: "Starting" until its first block */
	for (int i = 0; i < 200 && !strstr(gf_apic_call(&api, "\"GetState\""), "Running"); i++)
		gf_daemon_idle_ms(&dm, 50);
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetState\""), "Running", "the daemon runs");
	CHECK(!strstr(gf_apic_call(&api, "\"GetConfig\""), "TOKEN"));
	beyond_loopback(&api);
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	gf_test_rmtree(secret_dir);
	free(conf_text);
	printf("test_hostile_api_policy: ok\n");
	return 0;
}
