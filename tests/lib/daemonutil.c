#include "daemonutil.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "neural.h"
#include "status.h"
#include "testutil.h"

static struct gf_daemon
	*the_daemon; /* ---- processes ------------------------------------------------------------ */

static void cleanup_at_exit(void)
{
	gf_daemon_cleanup(the_daemon);
}

static int open_notify(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	/* Each message carries the time the kernel queued it: the test may read
	 * late (blocked in a status query or a JACK call), gaps must not grow. */
	int on = 1;
	CHECK(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0);
	return fd;
}

void gf_daemon_init(struct gf_daemon *d, const char *tag)
{
	memset(d, 0, sizeof(*d));
	d->pid = -1;
	char *t = gf_test_tmpdir(tag);
	snprintf(d->dir, sizeof(d->dir), "%s", t);
	free(t);
	snprintf(d->conf_path, sizeof(d->conf_path), "%s/gpufir.conf", d->dir);
	snprintf(d->log_path, sizeof(d->log_path), "%s/gpufir.log", d->dir);
	snprintf(d->sock_path, sizeof(d->sock_path), "%s/notify", d->dir);
	snprintf(d->status_path, sizeof(d->status_path), "%s/status", d->dir);
	d->notify_fd = open_notify(d->sock_path);
	CHECK(!the_daemon);
	the_daemon = d;
	atexit(cleanup_at_exit); /* a failed CHECK must not leave jackd or gpufir running */
}

void gf_daemon_spawn(struct gf_daemon *d, const char *bin, double watchdog_s)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed test (ctest timeout) takes it along */
		if (!freopen(d->log_path, "w", stderr) || !freopen(d->log_path, "a", stdout))
			_exit(126);
		setenv("NOTIFY_SOCKET", d->sock_path, 1);
		if (watchdog_s > 0) {
			char p[32], wd[32];
			snprintf(p, sizeof(p), "%ld", (long)getpid()); /* exec keeps the PID */
			snprintf(wd, sizeof(wd), "%.0f", watchdog_s * 1e6);
			setenv("WATCHDOG_PID", p, 1);
			setenv("WATCHDOG_USEC", wd, 1);
		}
		execl(bin, bin, "--live", "-c", d->conf_path, (char *)NULL);
		_exit(127);
	}
	d->pid = pid;
}

int gf_daemon_alive(struct gf_daemon *d)
{
	if (d->pid <= 0)
		return 0; /* waitpid(-1) would reap any child */
	if (waitpid(d->pid, NULL, WNOHANG) == 0)
		return 1;
	d->pid = -1;
	return 0;
}

void gf_daemon_terminate(struct gf_daemon *d, double timeout_s, const char *when)
{
	char why[256];
	kill(d->pid, SIGTERM);
	int wst = 0;
	pid_t r;
	double end = gf_now_s() + timeout_s;
	while ((r = waitpid(d->pid, &wst, WNOHANG)) == 0) {
		if (gf_now_s() > end) {
			snprintf(why, sizeof(why), "gpufir did not stop within %.0f s of SIGTERM%s",
				 timeout_s, when);
			gf_daemon_die(d, why);
		}
		gf_daemon_idle_ms(d, 20);
	}
	CHECK(r == d->pid);
	d->pid = -1;
	if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
		snprintf(why, sizeof(why), "gpufir did not exit 0 on SIGTERM%s (%s %d)", when,
			 WIFEXITED(wst) ? "exit status" : "killed by signal",
			 WIFEXITED(wst)	    ? WEXITSTATUS(wst)
			 : WIFSIGNALED(wst) ? WTERMSIG(wst)
					    : -1);
		gf_daemon_die(d, why);
	}
}

void gf_daemon_cleanup(struct gf_daemon *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
		d->pid = -1;
	}
	if (d->jack.name[0]) /* else never started: no files of its own to remove */
		gf_jack_server_stop(&d->jack, SIGTERM);
}

void gf_daemon_finish(struct gf_daemon *d)
{
	gf_daemon_cleanup(d);
	gf_test_rmtree(d->dir);
}

void gf_daemon_die(struct gf_daemon *d, const char *why)
{
	fprintf(stderr, "FAIL: %s\n--- gpufir log (tail) ---\n", why);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "grep -v '^ALSA lib' '%s' | tail -n 40 >&2", d->log_path);
	if (system(cmd) != 0)
		fprintf(stderr, "(no log)\n");
	gf_daemon_cleanup(d);
	exit(1);
}

const char *gf_daemon_test_bin(int need_jackd)
{
	const char *bin = getenv("GPUFIR_BIN");
	if (!bin)
		gf_test_skip("GPUFIR_BIN not set (run through ctest)");
	if (need_jackd && system("command -v jackd >/dev/null 2>&1") != 0)
		gf_test_skip("jackd not installed");
	return bin;
}

int gf_daemon_test_cuda(void)
{
	const char *tb = getenv("GPUFIR_TEST_BACKEND");
	return tb && strcmp(tb, "cuda") == 0;
}

/* The config's shared head, into @p path. */
static FILE *conf_head(const struct gf_daemon *d, const char *path, unsigned rate, unsigned block,
		       const char *backend, unsigned ch, const char *device)
{
	FILE *f = fopen(path, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %u;\nblock_frames = %u;\nbackend = \"%s\";\nlatency_slack = %u;\n"
		"status_socket = \"%s\";\n"
		"input = { device = \"%s\"; host_api = \"JACK\"; channels = %u; };\n"
		"output = { device = \"%s\"; host_api = \"JACK\"; };\n",
		rate, block, backend, gf_test_latency_slack(), d->status_path, device, ch, device);
	gf_daemon_conf_gpu_path(f);
	return f;
}

FILE *gf_daemon_conf_begin(const struct gf_daemon *d, unsigned rate, unsigned block, const char *backend,
			   unsigned ch, const char *device)
{
	return conf_head(d, d->conf_path, rate, block, backend, ch, device);
}

static void new_path(const struct gf_daemon *d, char *path, size_t len)
{
	snprintf(path, len, "%s.new", d->conf_path);
}

FILE *gf_daemon_conf_begin_new(const struct gf_daemon *d, unsigned rate, unsigned block, const char *backend,
			       unsigned ch, const char *device)
{
	char path[700];
	new_path(d, path, sizeof(path));
	return conf_head(d, path, rate, block, backend, ch, device);
}

void gf_daemon_conf_end_new(const struct gf_daemon *d, FILE *f)
{
	char path[700];
	new_path(d, path, sizeof(path));
	CHECK(fclose(f) == 0);
	CHECK(rename(path, d->conf_path) == 0);
}

void gf_daemon_conf_gpu_path(FILE *f)
{
	const char *path = getenv("GPUFIR_TEST_GPU_PATH");
	if (path && *path)
		fprintf(f, "gpu_path = \"%s\";\n", path);
}

void gf_daemon_write_taps_text(const struct gf_daemon *d, const char *name, const float *h, size_t n)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.9g\n", h[i]);
	CHECK(fclose(f) == 0);
}

/* The kernel picks a port no one holds; the daemon binds it a moment later. A port
 * derived from the pid could be held by anything on the machine. */
int gf_daemon_free_tcp_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	close(fd);
	return ntohs(a.sin_port);
}

int gf_daemon_http(int port, const char *request, char *out, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	CHECK(write(fd, request, strlen(request)) == (ssize_t)strlen(request));
	size_t n = 0;
	double end = gf_now_s() + 10.0;
	while (n < size - 1 && gf_now_s() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 200) <= 0)
			continue;
		ssize_t r = read(fd, out + n, size - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	out[n] = '\0';
	close(fd);
	return 0;
}

/* A WebSocket beyond loopback needs an address other hosts could reach; the first one will do. */
int gf_daemon_wide_address(char *out, size_t len)
{
	struct ifaddrs *ifs = NULL, *i;
	int found = 0;
	if (getifaddrs(&ifs) != 0)
		return 0;
	for (i = ifs; i && !found; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !(i->ifa_flags & IFF_LOOPBACK))
			found = inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
					  (socklen_t)len) != NULL;
	freeifaddrs(ifs);
	return found;
}

void gf_daemon_read_key(const struct gf_daemon *d, char *key, size_t size)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/control.key", d->dir);
	long n = gf_test_read_file(path, key, size - 1);
	CHECK(n >= 17);
	key[n] = '\0';
	key[strcspn(key, "\n")] = '\0';
}

/* ---- notify socket -------------------------------------------------------- */

/* One assignment: @p line (NUL-terminated), @p next the line after it (RELOADING=1's MONOTONIC_USEC). */
static int notify_line(struct gf_notify_log *nl, const char *line, const char *next, double at)
{
	if (strcmp(line, "READY=1") == 0) {
		nl->ready++;
		nl->in_reload = 0;
		nl->ready_at = at;
	} else if (strcmp(line, "RELOADING=1") == 0 && next && strncmp(next, "MONOTONIC_USEC=", 15) == 0) {
		CHECK(!nl->in_reload); /* the previous reload ended with READY=1 */
		nl->reloading++;
		nl->in_reload = 1;
		return 2;
	} else if (strcmp(line, "WATCHDOG=1") == 0) {
		if (nl->watchdog++ && at - nl->last_wd > nl->max_wd_gap) {
			nl->max_wd_gap = at - nl->last_wd;
			nl->max_wd_gap_end = at;
		}
		nl->last_wd = at;
	} else if (strncmp(line, "STATUS=", 7) == 0) {
		nl->status++;
		snprintf(nl->last_status, sizeof(nl->last_status), "%.1000s", line + 7);
		nl->watched += nl->watch && strstr(line + 7, nl->watch);
	} else if (strcmp(line, "STOPPING=1") == 0) {
		nl->stopping++;
	} else {
		return 0;
	}
	return 1;
}

/* A datagram: one assignment a line (the daemon merges what a full queue kept back into one). */
static void notify_msg(struct gf_notify_log *nl, const char *buf, double at)
{
	char copy[2048], *lines[16];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", buf);
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < 16;
	     l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	for (int i = 0; i < n;) {
		int used = notify_line(nl, lines[i], i + 1 < n ? lines[i + 1] : NULL, at);
		if (!used) {
			fprintf(stderr, "unexpected notify message '%s'\n", buf);
			exit(1);
		}
		i += used;
	}
}

/* One datagram, and when it was sent on gf_now_s()'s clock (from the
 * kernel's CLOCK_REALTIME stamp; the receive time where there is none). */
static ssize_t recv_stamped(int fd, char *buf, size_t len, double *at)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl)};
	ssize_t n = recvmsg(fd, &mh, 0);
	*at = gf_now_s();
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n > 0 && c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		struct timespec sent, real;
		memcpy(&sent, CMSG_DATA(c), sizeof(sent));
		clock_gettime(CLOCK_REALTIME, &real);
		double age = (double)(real.tv_sec - sent.tv_sec) + (real.tv_nsec - sent.tv_nsec) / 1e9;
		if (age >= 0.0)
			*at -= age;
	}
	return n;
}

void gf_daemon_notify_read(struct gf_daemon *d, int timeout_ms)
{
	struct pollfd p = {.fd = d->notify_fd, .events = POLLIN};
	double end = gf_now_s() + timeout_ms / 1000.0, at;
	for (int t = timeout_ms; poll(&p, 1, t) == 1; t = (int)fmax(0.0, (end - gf_now_s()) * 1000.0)) {
		char buf[2048];
		ssize_t n = recv_stamped(d->notify_fd, buf, sizeof(buf) - 1, &at);
		if (n <= 0)
			break;
		buf[n] = '\0';
		notify_msg(&d->nl, buf, at);
	}
}

void gf_daemon_idle_ms(struct gf_daemon *d, int ms)
{
	double end = gf_now_s() + ms / 1000.0;
	for (double left; (left = end - gf_now_s()) > 0;)
		gf_daemon_notify_read(d, (int)(left * 1000.0) + 1);
}

void gf_daemon_wait_ready(struct gf_daemon *d, int n, double timeout_s, const char *what)
{
	double end = gf_now_s() + timeout_s;
	while (d->nl.ready < n) {
		int up = gf_daemon_alive(d);
		if (gf_now_s() > end || !up) {
			char why[256];
			snprintf(why, sizeof(why), "%s: %d READY=1 after %.0f s, want %d%s", what,
				 d->nl.ready, timeout_s, n, up ? "" : " (gpufir exited)");
			gf_daemon_die(d, why);
		}
		gf_daemon_notify_read(d, 50);
	}
}

/* ---- status socket -------------------------------------------------------- */

void gf_daemon_query_status(struct gf_daemon *d, char *buf, size_t len)
{
	struct gf_errbuf eb = {{0}};
	if (gf_status_query(d->status_path, buf, len, 3000, &eb) != 0)
		gf_daemon_die(d, eb.msg);
}

long gf_daemon_status_num(const char *block, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s: ", key);
	const char *p = strstr(block, k);
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

int gf_daemon_status_has(const char *block, const char *what)
{
	if (strstr(block, what))
		return 1;
	fprintf(stderr, "status block lacks \"%s\":\n%s\n", what, block);
	return 0;
}

long gf_daemon_status_xruns(const char *st)
{
	return gf_daemon_status_num(st, "input_overflows") + gf_daemon_status_num(st, "output_underflows");
}

void gf_daemon_ran_on(struct gf_daemon *d, long *blocks, long xruns, const char *what, char *st, size_t len)
{
	gf_daemon_query_status(d, st, len);
	long b = gf_daemon_status_num(st, "blocks");
	printf("%s: blocks %ld (were %ld), xruns %ld (were %ld; device xruns %ld, output overflows %ld)\n",
	       what, b, *blocks, gf_daemon_status_xruns(st), xruns, gf_daemon_status_num(st, "device_xruns"),
	       gf_daemon_status_num(st, "output_overflows"));
	if (b <= *blocks)
		gf_daemon_die(d, "the stream restarted: its block count went back");
	if (gf_daemon_status_xruns(st) != xruns)
		gf_daemon_die(d, "an xrun while the live controls changed");
	*blocks = b;
}

void gf_daemon_expect_line(struct gf_daemon *d, const char *st, const char *key, const char *value)
{
	char want[256], why[300];
	snprintf(want, sizeof(want), "%s: %s\n", key, value);
	if (gf_daemon_status_has(st, want))
		return;
	snprintf(why, sizeof(why), "the status does not show %s: %s", key, value);
	gf_daemon_die(d, why);
}

void gf_daemon_reload_live(struct gf_daemon *d, int *ready, const char *what, const char *why)
{
	gf_daemon_wait_ready(d, ++*ready, 30.0, "reload");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(d, st, sizeof(st));
	const char *l = strstr(st, "last_reload: ");
	printf("reload with %s: %.*s\n", what, l ? (int)strcspn(l, "\n") : 0, l ? l : "");
	if (!gf_daemon_status_has(st, "last_reload: reloaded "))
		gf_daemon_die(d, why);
}

/* gpufir's i-th port of a direction (PortAudio names them "<client>:in_N" /
 * "out_N"; the client is "gpufir"), in registration order. */
static void gpufir_port(struct gf_daemon *d, jack_client_t *c, const char *re, unsigned long flags, int i,
			char *out, size_t len)
{
	const char **ports = jack_get_ports(c, re, NULL, flags);
	int n = 0;
	while (ports && ports[n])
		n++;
	if (i >= n) {
		jack_free(ports);
		gf_daemon_die(d, "gpufir's JACK ports not found");
	}
	snprintf(out, len, "%s", ports[i]);
	jack_free(ports);
}

void gf_daemon_connect_ports(struct gf_daemon *d, jack_client_t *c, const struct gf_daemon_tap *tap)
{
	for (int i = 0; i < tap->ch; i++) {
		char gin[256];
		gpufir_port(d, c, "^gpufir[^:]*:in_", JackPortIsInput, i, gin, sizeof(gin));
		const char **src = jack_port_get_all_connections(c, jack_port_by_name(c, gin));
		for (int k = 0; src && src[k]; k++)
			jack_disconnect(c, src[k], gin); /* PortAudio auto-connects the dummy capture */
		jack_free(src);
		CHECK(jack_connect(c, jack_port_name(tap->feed[i]), gin) == 0);
	}
	for (int i = 0; i < tap->rec_ch; i++) {
		char gout[256];
		gpufir_port(d, c, "^gpufir[^:]*:out_", JackPortIsOutput, i, gout, sizeof(gout));
		CHECK(jack_connect(c, gout, jack_port_name(tap->rec_port[i])) == 0);
	}
}

void gf_daemon_tap_init(struct gf_daemon_tap *t, const float *x, float *rec, size_t frames, int ch,
			size_t feed_start)
{
	gf_daemon_tap_init_io(t, x, ch, rec, ch, frames, feed_start);
}

void gf_daemon_tap_init_io(struct gf_daemon_tap *t, const float *x, int ch, float *rec, int rec_ch,
			   size_t frames, size_t feed_start)
{
	CHECK(ch >= 1 && ch <= GF_DAEMON_TAP_MAX_CH && rec_ch >= 1 && rec_ch <= GF_DAEMON_TAP_MAX_CH);
	t->x = x;
	t->rec = rec;
	t->frames = frames;
	t->ch = ch;
	t->rec_ch = rec_ch;
	atomic_store(&t->feed_pos, 0);
	atomic_store(&t->rec_pos, 0);
	atomic_store(&t->feed_start, feed_start);
}

static int tap_process(jack_nframes_t n, void *arg)
{
	struct gf_daemon_tap *t = arg;
	size_t f = atomic_load_explicit(&t->feed_pos, memory_order_relaxed);
	size_t r = atomic_load_explicit(&t->rec_pos, memory_order_relaxed);
	size_t s = atomic_load_explicit(&t->feed_start, memory_order_relaxed);
	size_t ch = (size_t)t->ch, rch = (size_t)t->rec_ch;
	for (size_t c = 0; c < ch; c++) {
		float *o = jack_port_get_buffer(t->feed[c], n);
		for (jack_nframes_t i = 0; i < n; i++) {
			size_t k = f + i;
			o[i] = k >= s && k - s < t->frames ? t->x[(k - s) * ch + c] : 0.0f;
		}
	}
	for (size_t c = 0; c < rch; c++) {
		const float *in = jack_port_get_buffer(t->rec_port[c], n);
		for (jack_nframes_t i = 0; i < n && r + i < t->frames; i++)
			t->rec[(r + i) * rch + c] = in[i];
	}
	atomic_store_explicit(&t->feed_pos, f + n, memory_order_relaxed);
	atomic_store_explicit(&t->rec_pos, r + n, memory_order_release);
	return 0;
}

jack_client_t *gf_daemon_jack_client(struct gf_daemon *d, const char *prefix, uint32_t rate, uint32_t period,
				     struct gf_daemon_tap *tap)
{
	setenv("JACK_NO_AUDIO_RESERVATION", "1", 1);
	jack_client_t *jc = NULL;
	jack_status_t jst;
	/* The device "system" offers as many channels as the server has dummy ports. */
	uint32_t cap = tap->ch > 2 ? (uint32_t)tap->ch : 2,
		 play = tap->rec_ch > 2 ? (uint32_t)tap->rec_ch : 2;
	if (gf_jack_server_start_io(&d->jack, prefix, rate, period, cap, play) == 0)
		jc = jack_client_open("gftest", JackNoStartServer | JackServerName, &jst, d->jack.name);
	if (!jc)
		gf_test_skip("the private jackd did not start");
	for (int i = 0; i < tap->ch || i < tap->rec_ch; i++) {
		char n[32];
		if (i < tap->ch) {
			snprintf(n, sizeof(n), "feed_%d", i + 1);
			tap->feed[i] =
				jack_port_register(jc, n, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
			CHECK(tap->feed[i]);
		}
		if (i < tap->rec_ch) {
			snprintf(n, sizeof(n), "rec_%d", i + 1);
			tap->rec_port[i] =
				jack_port_register(jc, n, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
			CHECK(tap->rec_port[i]);
		}
	}
	CHECK(jack_set_process_callback(jc, tap_process, tap) == 0);
	CHECK(jack_activate(jc) == 0);
	return jc;
}

void gf_daemon_need_deepfilter(void)
{
	char lib[4200];
	snprintf(lib, sizeof(lib), "%s/libdeepfilter.so", gf_neural_default_dir());
	if (access(lib, R_OK) != 0)
		gf_test_skip("no DeepFilterNet runtime (scripts/install-deepfilter.sh)");
}
