/*
 * The control page on the WebSocket's port (docs/api.md, "The control page")
 * against the real `gpufir --live` under JACK's dummy driver: a plain HTTP
 * GET / answers 200, text/html and the page (with the suppressor's and the
 * neural stage's rows, hidden until a Get says the stage runs, and their
 * controls); GET /nosuch and a POST do not get it. Then headless Chromium loads the page with ?volume=-50
 * and, once its JavaScript ran against the WebSocket, the page (read through Chromium's DevTools pipe) shows
 * the state "Running", the config's filter and file, meters filled by a level push ("silent": the dummy
 * capture), "not muted", the slider's range (-120 dB to volume_limit_db) and the volume, still 0 dB: the page
 * applies nothing from its URL (it once set -50). Its slider then sets -10 dB, which the daemon reports over
 * the Unix socket, and the response plot is shown. Hostile pages in the same browser change nothing: a page
 * served from another local port that opens the WebSocket (refused: its Origin) and hides the daemon's own
 * page with ?volume=-50 in an iframe, and the daemon's page reached through another name (DNS rebinding,
 * simulated by Chromium's host resolver rules: refused, its Host). After a reload the page shows the new
 * filter and fetches its plot again; Beyond loopback (the machine's first non-loopback IPv4 address; skipped
 * where there is none) the page asks for the control key, says a wrong one
 * is wrong, shows the state once the right one is typed into its field, and
 * authenticates by itself when the tab is reloaded; the key is never in its
 * URL.
 * GET /response.svg serves the running filter's plot, kept through a reload
 * that fails. Skipped (77) only where no chromium binary is installed (after
 * the HTTP checks).
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apiclient.h"
#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 256
#define CH 2
#define FILTER "pagefilter"

static struct gf_daemon dm;
static char ctl_path[700];
static int port, other_port; /* the daemon's; the hostile page's server's */
static struct gf_apiclient api;

/* The config, its filter from @p taps_file. */
static void write_conf(const char *taps_file)
{
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f,
		"control_socket = \"%s\";\ncontrol_port = %d;\nvolume_limit_db = 6.0;\n"
		"control_key_file = \"%s/control.key\";\n"
		"filters = ( { name = \"" FILTER "\"; file = \"%s\"; format = \"text\"; } );\n"
		"chain = [\"" FILTER "\"];\n",
		ctl_path, port, dm.dir, taps_file);
	CHECK(fclose(f) == 0);
}

static void setup(void)
{
	uint64_t rng = gf_test_seed("test_daemon_api_page");
	float a[32], b[48];
	gf_daemon_init(&dm, "daemon-page");
	gf_test_fill_decaying_taps(a, 32, &rng);
	gf_test_fill_decaying_taps(b, 48, &rng);
	gf_daemon_write_taps_text(&dm, "taps_a.txt", a, 32);
	gf_daemon_write_taps_text(&dm, "taps_b.txt", b, 48);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	gf_apic_init(&api, &dm, ctl_path);
	port = gf_daemon_free_tcp_port();
	do
		other_port = gf_daemon_free_tcp_port();
	while (other_port == port);
	write_conf("taps_a.txt");
}

/* Reload the config with @p taps_file as the filter (the reply comes once the reload is over). */
static void reload_with(const char *taps_file, const char *want, const char *what)
{
	write_conf(taps_file);
	gf_apic_expect(&api, gf_apic_call(&api, "\"Reload\""), want, what);
}

/* One HTTP/1.1 request over a fresh TCP connection; the whole response (the server closes it:
 * "Connection: close") in @p out, or what came within 10 s. */
static void http(const char *request, char *out, size_t size)
{
	if (gf_daemon_http(port, request, out, size) != 0)
		gf_daemon_die(&dm, "no TCP listener on the control port");
}

static void expect_http(const char *got, const char *want, const char *what)
{
	if (!strstr(got, want)) {
		printf("%s: wanted \"%s\" in:\n%.600s\n", what, want, got);
		gf_daemon_die(&dm, what);
	}
}

/* GET /response.svg: 200, an SVG whose title names the running filter's @p taps. */
static void expect_plot(const char *taps, const char *what)
{
	static char r[1 << 20];
	http("GET /response.svg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", r, sizeof(r));
	expect_http(r, "HTTP/1.1 200", what);
	CHECK(strcasestr(r, "\r\ncontent-type: image/svg+xml"));
	const char *body = strstr(r, "\r\n\r\n"), *cl = strcasestr(r, "\r\ncontent-length:");
	CHECK(body && cl && strtol(cl + 17, NULL, 10) == (long)strlen(body + 4)); /* all of it */
	expect_http(body, "<svg xmlns=\"http://www.w3.org/2000/svg\"", what);
	expect_http(body, "</svg>\n", what);
	char title[160];
	snprintf(title, sizeof(title), "gpufir.conf: %d Hz, %d channels, %s", RATE, CH, taps);
	expect_http(body, title, what);
	/* Both channels run the one filter: the second's curves are dashed, the legend says so. */
	expect_http(body, ">channel 1 = channel 0</text>", what);
	printf("%s: %zu bytes of SVG, \"%s\"\n", what, strlen(body + 4), title);
}

static void plain_http(void)
{
	static char r[65536];
	http("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", r, sizeof(r));
	expect_http(r, "HTTP/1.1 200", "GET / answers 200");
	CHECK(strcasestr(r, "\r\ncontent-type: text/html"));
	const char *body = strstr(r, "\r\n\r\n");
	CHECK(body);
	body += 4;
	const char *cl = strcasestr(r, "\r\ncontent-length:");
	CHECK(cl && strtol(cl + 17, NULL, 10) == (long)strlen(body)); /* the whole page came */
	expect_http(body, "<!DOCTYPE html>", "the page");
	expect_http(body, "SubscribeSignalLevels", "the page's script");
	/* the stages' live controls: a row each, hidden until its Get says the stage runs */
	expect_http(body, "<tr id=\"suprow\" hidden>", "the suppressor's row");
	expect_http(body, "send({SetSuppressor: {bypass: !bypassed}})", "the suppressor's bypass toggle");
	expect_http(body, "<tr id=\"neurow\" hidden>", "the neural stage's row");
	expect_http(body, "send({SetNeural: {bypass: !nbypassed}})", "the neural stage's bypass toggle");
	expect_http(body, "send({SetNeural: {atten_lim_db: parseFloat(this.value)}})",
		    "the neural stage's atten_lim_db slider");
	CHECK(!strstr(body, "http://") && !strstr(body, "https://")); /* no external URL */
	printf("GET /: %zu bytes of page\n", strlen(body));
	http("GET /nosuch HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", r, sizeof(r));
	expect_http(r, "HTTP/1.1 404", "GET /nosuch answers 404");
	CHECK(!strstr(r, "SubscribeSignalLevels"));
	http("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", r,
	     sizeof(r));
	CHECK(!strstr(r, "HTTP/1.1 200") && !strstr(r, "SubscribeSignalLevels"));
	printf("POST /: %.40s\n", r);
	expect_plot("32 taps", "GET /response.svg at start-up");
}

/* The chromium binary on PATH (Debian's package: chromium), or NULL. */
static const char *find_chromium(void)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
	static char path[1024];
	const char *env = getenv("PATH");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (const char *p = env ? env : "/usr/bin:/bin"; *p;) {
			size_t len = strcspn(p, ":");
			snprintf(path, sizeof(path), "%.*s/%s", (int)len, p, names[i]);
			if (access(path, X_OK) == 0)
				return path;
			p += len + (p[len] == ':');
		}
	}
	return NULL;
}

/* Headless Chromium driven over its DevTools pipe (--remote-debugging-pipe: JSON messages ended by
 * a NUL, commands on its fd 3, replies and events on its fd 4). --dump-dom cannot serve: it dumps
 * at the load event, or when a virtual-time budget runs out, which does not wait for WebSocket
 * replies; here the test asks the page what it shows until its script has filled it in. */
struct cdp {
	pid_t pid;
	int to, from;
	char buf[1 << 20];
	size_t len;
	int next_id;
};

static void cdp_start(struct cdp *b, const char *chromium, const char *url)
{
	int in[2], out[2];
	CHECK(pipe(in) == 0 && pipe(out) == 0);
	char profile[700], log[700];
	snprintf(profile, sizeof(profile), "--user-data-dir=%s/chromium", dm.dir);
	snprintf(log, sizeof(log), "%s/chromium.log", dm.dir);
	b->pid = fork();
	CHECK(b->pid >= 0);
	if (b->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || dup2(in[0], 3) < 0 || dup2(out[1], 4) < 0)
			_exit(127);
		for (int i = 5; i < 1024; i++)
			close(i);
		/* evil.example: a name of an attacker's that resolves to this host (DNS rebinding) */
		execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		      "--remote-debugging-pipe", "--host-resolver-rules=MAP evil.example 127.0.0.1", profile,
		      url, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	b->to = in[1];
	b->from = out[0];
	b->len = 0;
	b->next_id = 1;
}

/* Sends a command (@p session: "" for the browser's) and returns its reply (in b->buf, valid until
 * the next call), or NULL after 20 s. */
static const char *cdp_call(struct cdp *b, const char *session, const char *method, const char *params)
{
	static char msg[4096], want[32];
	int id = b->next_id++;
	int n = snprintf(msg, sizeof(msg), "{\"id\":%d,%s%s%s\"method\":\"%s\",\"params\":%s}", id,
			 session[0] ? "\"sessionId\":\"" : "", session, session[0] ? "\"," : "", method,
			 params);
	CHECK(n > 0 && (size_t)n < sizeof(msg) - 1);
	CHECK(write(b->to, msg, (size_t)n + 1) == n + 1); /* with its NUL */
	snprintf(want, sizeof(want), "{\"id\":%d,", id);
	double end = gf_now_s() + 20.0;
	for (;;) {
		char *nul;
		while ((nul = memchr(b->buf, '\0', b->len))) { /* whole messages: the reply, or dropped */
			size_t mlen = (size_t)(nul - b->buf) + 1;
			if (strncmp(b->buf, want, strlen(want)) == 0) {
				static char reply[1 << 16];
				size_t k = mlen < sizeof(reply) ? mlen : sizeof(reply);
				memcpy(reply, b->buf, k);
				reply[k - 1] = '\0';
				memmove(b->buf, b->buf + mlen, b->len - mlen);
				b->len -= mlen;
				return reply;
			}
			memmove(b->buf, b->buf + mlen, b->len - mlen);
			b->len -= mlen;
		}
		struct pollfd p = {.fd = b->from, .events = POLLIN};
		if (gf_now_s() > end || b->len == sizeof(b->buf))
			return NULL;
		if (poll(&p, 1, 200) <= 0)
			continue;
		ssize_t r = read(b->from, b->buf + b->len, sizeof(b->buf) - b->len);
		if (r <= 0)
			return NULL;
		b->len += (size_t)r;
	}
}

static void cdp_stop(struct cdp *b)
{
	close(b->to);
	close(b->from);
	kill(b->pid, SIGTERM);
	int st;
	double end = gf_now_s() + 10.0;
	while (waitpid(b->pid, &st, WNOHANG) == 0) {
		if (gf_now_s() > end) {
			kill(b->pid, SIGKILL);
			waitpid(b->pid, &st, 0);
			break;
		}
		usleep(50000);
	}
}

/* The string after "KEY":" in @p msg, up to its closing quote, in @p out; "" if absent. */
static const char *json_str(const char *msg, const char *key, char *out, size_t size)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":\"", key);
	const char *at = msg ? strstr(msg, k) : NULL;
	out[0] = '\0';
	if (at)
		snprintf(out, size, "%.*s", (int)strcspn(at + strlen(k), "\""), at + strlen(k));
	return out;
}

/* What the page shows: "id=text;" for each field, then the meters' push count and text. */
#define PAGE_SUMMARY                                                                                         \
	"{\"returnByValue\":true,\"expression\":\"['conn','state','config','filters','volume','mute']"       \
	".map(function(i){return i+'='+document.getElementById(i).textContent;}).join(';')"                  \
	"+';range='+document.getElementById('vol').min+'..'+document.getElementById('vol').max"              \
	"+';pushes='+document.getElementById('capture').dataset.pushes"                                      \
	"+';capture='+document.getElementById('capture').textContent"                                        \
	"+';playback='+document.getElementById('playback').textContent"                                      \
	"+';plot='+(document.getElementById('plot').naturalWidth>0?'shown':'none')"                          \
	"+';plotsrc='+document.getElementById('plot').src.split('?')[1]+';'\"}"

static void expect_page(const char *page, const char *want, const char *what)
{
	if (!strstr(page, want)) {
		printf("%s: wanted \"%s\" in the page: %s\n", what, want, page);
		gf_daemon_die(&dm, what);
	}
}

/* The page once its script ran: every field from a reply, the meters from a push, the plot shown. */
static void expect_first_page(const char *page)
{
	char want[800];
	expect_page(page, "conn=open;", "the page's connection");
	expect_page(page, "state=Running;", "the page's state");
	expect_page(page, "filters=" FILTER " (32 taps, cpu);", "the page's filters");
	snprintf(want, sizeof(want), "config=%s;", dm.conf_path);
	expect_page(page, want, "the page's config path");
	expect_page(page, "volume=0.0;", "the page's volume: its URL's ?volume=-50 not applied");
	expect_page(page, "mute=not muted;", "the page's mute");
	expect_page(page, ";range=-120..6;", "the slider's range: -120 dB to volume_limit_db");
	/* Meters: one per channel, filled from a SignalLevelsEvent (the dummy driver's capture is
	 * silent: -1000, CamillaDSP's silence); pushes counts the pushes the page saw. */
	const char *pushes = strstr(page, ";pushes=");
	if (!pushes || strtol(pushes + 8, NULL, 10) < 1)
		gf_daemon_die(&dm, "the page's meters got no SignalLevelsEvent");
	expect_page(page, "capture= 1: silent 2: silent;", "the capture meters");
	expect_page(page, "playback= 1: silent 2: silent;", "the playback meters");
	expect_page(page, ";plot=shown;plotsrc=reloads=0;", "the page's response plot");
}

/* Evaluate @p expr (JavaScript without double quotes) in @p session; its string value in @p out. */
static const char *eval_str(struct cdp *b, const char *session, const char *expr, char *out, size_t size)
{
	char params[2048];
	snprintf(params, sizeof(params), "{\"returnByValue\":true,\"expression\":\"%s\"}", expr);
	return json_str(cdp_call(b, session, "Runtime.evaluate", params), "value", out, size);
}

/* Open @p url in a new tab; a session attached to it in @p session. */
static void open_tab(struct cdp *b, const char *url, char *session, size_t size)
{
	char params[512], target[128];
	snprintf(params, sizeof(params), "{\"url\":\"%s\"}", url);
	json_str(cdp_call(b, "", "Target.createTarget", params), "targetId", target, sizeof(target));
	CHECK(target[0]);
	snprintf(params, sizeof(params), "{\"targetId\":\"%s\",\"flatten\":true}", target);
	json_str(cdp_call(b, "", "Target.attachToTarget", params), "sessionId", session, size);
	CHECK(session[0]);
}

/* The page's slider, moved to -10 dB as a user would: the daemon's volume follows. */
static void slider_volume(struct cdp *b, const char *session)
{
	char out[256];
	eval_str(b, session,
		 "(function(){var v=document.getElementById('vol');v.value=-10;"
		 "v.dispatchEvent(new Event('change'));return 'moved';})()",
		 out, sizeof(out));
	CHECK(strcmp(out, "moved") == 0);
	double end = gf_now_s() + 10.0, v;
	while ((v = gf_apic_num(gf_apic_call(&api, "\"GetVolume\""), "value")) != -10.0 && gf_now_s() < end)
		usleep(100000);
	gf_apic_expect_near(&api, v, -10.0, 1e-6, "the volume the page's slider set");
}

/* A page of another origin: it opens the daemon's WebSocket and, on open, would set the volume and
 * read the config; it also hides the daemon's own page, ?volume=-50 in its URL, in an iframe. */
static const char hostile_html[] =
	"<!DOCTYPE html><html><body><p id=r>connecting</p>"
	"<iframe style=display:none src=http://127.0.0.1:%d/?volume=-50></iframe><script>"
	"var r=document.getElementById('r'),ws=new WebSocket('ws://127.0.0.1:%d/');"
	"ws.onopen=function(){r.textContent+=' open';ws.send(JSON.stringify({SetVolume:-50}));"
	"ws.send(JSON.stringify('GetConfig'));};"
	"ws.onmessage=function(e){r.textContent+=' got '+e.data.slice(0,30);};"
	"ws.onerror=function(){r.textContent+=' error';};"
	"ws.onclose=function(){r.textContent+=' closed';};"
	"</script></body></html>";

/* Serve hostile_html on other_port (a child process) until killed. @return its pid */
static pid_t hostile_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)other_port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 8) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid > 0) {
		close(fd);
		return pid;
	}
	char body[2048], head[256], req[4096];
	int blen = snprintf(body, sizeof(body), hostile_html, port, port);
	int hlen = snprintf(head, sizeof(head),
			    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
			    "Connection: close\r\n\r\n",
			    blen);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		struct pollfd p = {.fd = c, .events = POLLIN};
		if (poll(&p, 1, 2000) == 1 && read(c, req, sizeof(req)) > 0 &&
		    write(c, head, (size_t)hlen) == hlen && write(c, body, (size_t)blen) == blen)
			shutdown(c, SHUT_WR);
		close(c);
	}
}

static void hostile_pages(struct cdp *b)
{
	char url[128], session[128], out[512];
	pid_t srv = hostile_server();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", other_port);
	open_tab(b, url, session, sizeof(session));
	double t0 = gf_now_s();
	do {
		usleep(100000);
		eval_str(b, session, "document.getElementById('r').textContent", out, sizeof(out));
	} while (!strstr(out, "closed") && gf_now_s() < t0 + 15.0);
	usleep(3000000); /* the iframe's page: loaded, connected, and (it once did) acting on its URL */
	printf("chromium: a page from port %d: \"%s\"\n", other_port, out);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	if (!strstr(out, "closed") || strstr(out, "open") || strstr(out, "got"))
		gf_daemon_die(&dm, "a page of another origin used the WebSocket");
	gf_apic_expect_near(&api, gf_apic_num(gf_apic_call(&api, "\"GetVolume\""), "value"), -10.0, 1e-6,
			    "the volume after a hostile page and its hidden iframe");
	/* DNS rebinding: the daemon's page under an attacker's name is not served. */
	snprintf(url, sizeof(url), "http://evil.example:%d/", port);
	open_tab(b, url, session, sizeof(session));
	t0 = gf_now_s();
	do {
		usleep(100000);
		eval_str(b, session,
			 "document.readyState+' '+(document.getElementById('conn')?'served':'refused: '"
			 "+document.body.textContent.slice(0,60))",
			 out, sizeof(out));
	} while (strncmp(out, "complete", 8) != 0 && gf_now_s() < t0 + 15.0);
	printf("chromium: the page at evil.example:%d: \"%s\"\n", port, out);
	if (!strstr(out, "complete refused: 421"))
		gf_daemon_die(&dm, "the daemon's page was served under another name (DNS rebinding)");
}

/* What the page shows of its key: the form shown or not, its message, the state, the connection. */
#define KEY_SUMMARY                                                                                          \
	"(document.getElementById('keyform').hidden?'form=hidden':'form=shown')"                             \
	"+';why='+document.getElementById('keywhy').textContent"                                             \
	"+';state='+document.getElementById('state').textContent"                                            \
	"+';volume='+document.getElementById('volume').textContent"                                          \
	"+';url='+location.href+';'"

/* Poll the page in @p session until it shows @p want (10 s at most); what it shows in @p out. */
static void await_page(struct cdp *b, const char *session, const char *want, char *out, size_t size)
{
	double end = gf_now_s() + 10.0;
	do {
		usleep(100000);
		eval_str(b, session, KEY_SUMMARY, out, size);
	} while (!strstr(out, want) && gf_now_s() < end);
}

/* Type @p key into the page's key field and send it, as a user would. */
static void type_key(struct cdp *b, const char *session, const char *key)
{
	char js[512], out[64];
	snprintf(js, sizeof(js),
		 "(function(){document.getElementById('key').value='%s';"
		 "document.getElementById('keyform').requestSubmit();return 'sent';})()",
		 key);
	eval_str(b, session, js, out, sizeof(out));
	CHECK(strcmp(out, "sent") == 0);
}

/* The WebSocket beyond loopback, where the daemon refuses a client every command until it sends
 * the control key: the page says the key is needed and shows nothing else; a wrong key is said
 * to be wrong; the right one, typed into its field, gets the state shown, and a reload of the tab
 * authenticates again by itself. The key is never in the URL. Then back to loopback. */
static void wide_page(struct cdp *b)
{
	char addr[64], url[128], session[128], out[1024], key[160];
	if (!gf_daemon_wide_address(addr, sizeof(addr))) {
		printf("no non-loopback IPv4 address: the page beyond loopback is not tried\n");
		return;
	}
	gf_daemon_read_key(&dm, key, sizeof(key));
	int port2 = gf_daemon_free_tcp_port();
	close(gf_apic_move_ws(&api, addr, port2));
	snprintf(url, sizeof(url), "http://%s:%d/", addr, port2);
	open_tab(b, url, session, sizeof(session));
	await_page(b, session, "form=shown;", out, sizeof(out));
	printf("chromium: the page beyond loopback, no key: %s\n", out);
	if (!strstr(out, "form=shown;why=;state=-;"))
		gf_daemon_die(&dm, "the page beyond loopback did not ask for the control key");
	type_key(b, session, "not-the-key");
	await_page(b, session, "why=wrong control key;", out, sizeof(out));
	printf("chromium: a wrong key: %s\n", out);
	if (!strstr(out, "form=shown;why=wrong control key;state=-;"))
		gf_daemon_die(&dm, "the page did not say the key was wrong");
	type_key(b, session, key);
	await_page(b, session, "state=Running;", out, sizeof(out));
	printf("chromium: the right key: %s\n", out);
	if (!strstr(out, "form=hidden;why=;state=Running;") || strstr(out, key))
		gf_daemon_die(&dm, "the page did not show the state once given the key");
	eval_str(b, session, "location.reload();'reloaded'", out, sizeof(out));
	await_page(b, session, "state=Running;", out, sizeof(out));
	printf("chromium: the tab reloaded: %s\n", out);
	if (!strstr(out, "form=hidden;why=;state=Running;") || strstr(out, key))
		gf_daemon_die(&dm, "the reloaded page did not authenticate by itself");
	close(gf_apic_move_ws(&api, "127.0.0.1", port)); /* back on loopback */
}

static void chromium_page(const char *chromium)
{
	char url[128], target[128], session[128], want[800];
	static char page[8192];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?volume=-50", port);
	struct cdp *b = calloc(1, sizeof(*b));
	CHECK(b);
	cdp_start(b, chromium, url);
	double t0 = gf_now_s();
	/* The page target the command line opened, and a session attached to it. */
	target[0] = '\0';
	while (!target[0] && gf_now_s() < t0 + 30.0) {
		const char *r = cdp_call(b, "", "Target.getTargets", "{}");
		if (!r)
			break;
		const char *at = strstr(r, "\"type\":\"page\"");
		if (at && strstr(r, url)) { /* its targetId comes before its type */
			const char *id = NULL;
			for (const char *p = r; (p = strstr(p, "\"targetId\":\"")) && p < at; p++)
				id = p;
			json_str(id, "targetId", target, sizeof(target));
		}
		if (!target[0])
			usleep(100000);
	}
	if (!target[0]) {
		cdp_stop(b);
		snprintf(want, sizeof(want), "tail -n 20 '%s/chromium.log'", dm.dir);
		if (system(want) != 0)
			printf("(no chromium log)\n");
		gf_daemon_die(&dm, "headless chromium did not open the page");
	}
	snprintf(want, sizeof(want), "{\"targetId\":\"%s\",\"flatten\":true}", target);
	json_str(cdp_call(b, "", "Target.attachToTarget", want), "sessionId", session, sizeof(session));
	CHECK(session[0]);
	/* Until the script has every reply and a level push (or 20 s): then what it shows. */
	const char *r = NULL;
	do {
		usleep(100000);
		json_str(r = cdp_call(b, session, "Runtime.evaluate", PAGE_SUMMARY), "value", page,
			 sizeof(page));
	} while ((!strstr(page, ";pushes=") || strstr(page, "=-;") || strstr(page, "pushes=0;") ||
		  !strstr(page, ";plot=shown;") || strstr(page, "range=-120..0;")) &&
		 gf_now_s() < t0 + 20.0);
	if (!page[0])
		printf("Runtime.evaluate: %.600s\n", r ? r : "(no reply)");
	printf("chromium: after %.1f s the page shows: %s\n", gf_now_s() - t0, page);
	expect_first_page(page);
	gf_apic_expect_near(&api, gf_apic_num(gf_apic_call(&api, "\"GetVolume\""), "value"), 0.0, 1e-6,
			    "the volume after the page loaded with ?volume=-50");
	slider_volume(b, session);
	hostile_pages(b);
	/* A reload: the page fetches the new plot and the new filters. */
	reload_with("taps_b.txt", "\"result\":\"Ok\"", "Reload to the 48-tap filter");
	double t1 = gf_now_s();
	do {
		usleep(100000);
		json_str(cdp_call(b, session, "Runtime.evaluate", PAGE_SUMMARY), "value", page, sizeof(page));
	} while ((!strstr(page, "(48 taps") || strstr(page, "reloads=0;") || !strstr(page, ";plot=shown;")) &&
		 gf_now_s() < t1 + 10.0);
	printf("chromium: %.1f s after the reload the page shows: %s\n", gf_now_s() - t1, page);
	wide_page(b);
	cdp_stop(b);
	free(b);
	expect_page(page, "filters=" FILTER " (48 taps, cpu);", "the page's filters after a reload");
	if (strstr(page, "plotsrc=reloads=0;") || !strstr(page, ";plot=shown;"))
		gf_daemon_die(&dm, "the page did not show the new response plot after a reload");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	const char *chromium = find_chromium();
	setup();
	if (gf_jack_server_start(&dm.jack, "gpufir-page", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetVolume\""), "\"value\":0", "the volume at start");
	plain_http();
	if (chromium) {
		chromium_page(chromium);
	} else {
		reload_with("taps_b.txt", "\"result\":\"Ok\"", "Reload to the 48-tap filter");
	}
	expect_plot("48 taps", "GET /response.svg after a reload");
	/* A reload that fails keeps the running filter, and its plot. */
	reload_with("taps_x.txt",
		    "\"result\":{\"ConfigValidationError\":", "Reload to a missing filter file");
	expect_plot("48 taps", "GET /response.svg after a failed reload");
	gf_apic_expect(&api, gf_apic_call(&api, "\"GetState\""), "Running", "the state at the end");
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	if (!chromium)
		gf_test_skip("no chromium binary: the page's script not run (HTTP checked)");
	printf("test_daemon_api_page: ok\n");
	return 0;
}
