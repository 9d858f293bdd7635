/* `gpufir --live` survives its JACK server being killed and coming back.
 *
 * As systemd runs it (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID = its own
 * PID), against a private JACK server (dummy driver, sync mode). Before the
 * loss, two JACK test clients play noise through gpufir and record what comes
 * back: the reference convolution at the reported latency, window by window.
 * Then jackd is killed (SIGKILL). The daemon must keep its PID (it restarts
 * itself in place, since PortAudio cannot reconnect inside one process), say
 * so in STATUS= and on its status socket, and keep pinging the watchdog while
 * it retries. The server comes back under the same name 2 s later: READY=1
 * again, and the same PID filters audio again, checked the same way, without
 * having leaked the old image's descriptors. SIGTERM then ends it with 0. */
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jackplay.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 64
#define CH 2
#define TAPS 63
#define SIG_FRAMES (RATE * 2)	       /* signal played through gpufir per check */
#define REC_FRAMES (SIG_FRAMES + RATE) /* room for the delay */
#define WIN 4800		       /* frames per checked window */
#define TOL 1e-5		       /* rel. L2 per window */
#define WATCHDOG_S 2.0		       /* WATCHDOG_USEC: pings every 1 s */
#define DOWN_MS 2000		       /* how long the server stays away */

static char dir[512], conf_path[600], log_path[600], sock_path[600], status_path[600];
static struct gf_jack_server srv;
static pid_t gpufir_pid = -1;
static int notify_fd = -1;
static float h[TAPS * CH]; /* the same taps on both channels */
static float *x;
static double *y; /* reference output */

/* ---- processes ------------------------------------------------------------ */

static void cleanup(void)
{
	if (gpufir_pid > 0) {
		kill(gpufir_pid, SIGKILL);
		waitpid(gpufir_pid, NULL, 0);
		gpufir_pid = -1;
	}
	gf_jack_server_stop(&srv, SIGTERM);
}

static void die_with_log(const char *why)
{
	fprintf(stderr, "FAIL: %s\n--- gpufir log (tail) ---\n", why);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "grep -v '^ALSA lib' '%s' | tail -n 40 >&2", log_path);
	if (system(cmd) != 0)
		fprintf(stderr, "(no log)\n");
	cleanup();
	exit(1);
}

/* The daemon, as systemd starts it: exec'ed, so WATCHDOG_PID is its PID. */
static pid_t spawn_gpufir(const char *bin)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed test (ctest timeout) takes it along */
		if (!freopen(log_path, "w", stderr) || !freopen(log_path, "a", stdout))
			_exit(126);
		char p[32], wd[32];
		snprintf(p, sizeof(p), "%ld", (long)getpid());
		snprintf(wd, sizeof(wd), "%.0f", WATCHDOG_S * 1e6);
		setenv("WATCHDOG_PID", p, 1);
		setenv("WATCHDOG_USEC", wd, 1);
		setenv("NOTIFY_SOCKET", sock_path, 1);
		execl(bin, bin, "--live", "-c", conf_path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int alive(void)
{
	return waitpid(gpufir_pid, NULL, WNOHANG) == 0;
}

static int count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	DIR *d = opendir(path);
	int n = 0;
	CHECK(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- notify socket: the systemd side ------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct {
	int ready, watchdog, stopping, saw_lost;
	double last_wd, max_wd_gap;
	char last_status[1024];
} nl;

static void notify_read(int timeout_ms)
{
	struct pollfd p = {.fd = notify_fd, .events = POLLIN};
	double end = now_s() + timeout_ms / 1000.0;
	for (int t = timeout_ms; poll(&p, 1, t) == 1; t = (int)fmax(0.0, (end - now_s()) * 1000.0)) {
		char buf[2048];
		ssize_t n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (strcmp(buf, "READY=1") == 0) {
			nl.ready++;
		} else if (strcmp(buf, "WATCHDOG=1") == 0) {
			double at = now_s();
			if (nl.watchdog++ && at - nl.last_wd > nl.max_wd_gap)
				nl.max_wd_gap = at - nl.last_wd;
			nl.last_wd = at;
		} else if (strncmp(buf, "STATUS=", 7) == 0) {
			snprintf(nl.last_status, sizeof(nl.last_status), "%.1000s", buf + 7);
			nl.saw_lost |= strstr(buf, "audio server lost: retrying (attempt ") != NULL;
		} else if (strcmp(buf, "STOPPING=1") == 0) {
			nl.stopping++;
		} else if (strncmp(buf, "RELOADING=1", 11) != 0) {
			fprintf(stderr, "unexpected notify message '%s'\n", buf);
			exit(1);
		}
	}
}

static void idle_ms(int ms)
{
	double end = now_s() + ms / 1000.0;
	for (double left; (left = end - now_s()) > 0;)
		notify_read((int)(left * 1000.0) + 1);
}

static void wait_ready(int n, double timeout_s, const char *what)
{
	double end = now_s() + timeout_s;
	while (nl.ready < n) {
		if (now_s() > end || !alive()) {
			char why[256];
			snprintf(why, sizeof(why), "%s: %d READY=1 after %.0f s, want %d%s", what, nl.ready,
				 timeout_s, n, alive() ? "" : " (gpufir exited)");
			die_with_log(why);
		}
		notify_read(50);
	}
}

static int open_notify(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* ---- status socket ------------------------------------------------------- */

static void query_status(char *buf, size_t len)
{
	struct gf_errbuf eb = {{0}};
	if (gf_status_query(status_path, buf, len, 3000, &eb) != 0)
		die_with_log(eb.msg);
}

static long status_num(const char *block, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s: ", key);
	const char *p = strstr(block, k);
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

/* ---- audio --------------------------------------------------------------- */

/* rec[m + d] == y[m] on a window half a second in: the delay d, or -1. */
static long find_delay(const float *rec, uint32_t n)
{
	const size_t m0 = RATE / 2, len = 512;
	for (long d = 0; d < RATE / 2; d++) {
		if (m0 + len + (size_t)d > n)
			break;
		double err = 0, ref = 0;
		for (size_t i = m0 * CH; i < (m0 + len) * CH; i++) {
			err += (rec[i + (size_t)d * CH] - y[i]) * (rec[i + (size_t)d * CH] - y[i]);
			ref += y[i] * y[i];
		}
		if (sqrt(err / ref) < TOL)
			return d;
	}
	return -1;
}

/* Play the signal through gpufir and check the recording: the reference at
 * one constant delay, which must be the reported latency, window by window. */
static void check_audio(const char *when)
{
	struct gf_jack_rig *rig = gf_jack_rig_open(CH, REC_FRAMES);
	if (!rig || gf_jack_rig_connect(rig, "gpufir", 1) != 0)
		die_with_log("cannot connect the JACK test clients to gpufir");
	idle_ms(100);
	gf_jack_rig_record(rig);
	gf_jack_rig_play(rig, x, SIG_FRAMES, NULL, NULL);
	double end = now_s() + 20.0;
	while (!gf_jack_rig_played(rig) && now_s() < end)
		idle_ms(50);
	idle_ms(300); /* the delay's worth of output */
	const float *rec;
	uint32_t n = gf_jack_rig_stop_recording(rig, &rec);
	char st[GF_STATUS_MAX];
	query_status(st, sizeof(st));
	long latency = status_num(st, "latency_frames");
	long offset = (long)(gf_jack_rig_play_time(rig) - gf_jack_rig_record_time(rig));
	long d = find_delay(rec, n);
	if (d < 0)
		die_with_log("the recording is not the filtered signal at any delay");
	double worst = 0;
	for (size_t m = 0; m + WIN <= SIG_FRAMES && m + WIN + (size_t)d <= n; m += WIN) {
		double err = 0, ref = 0;
		for (size_t i = m * CH; i < (m + WIN) * CH; i++) {
			err += (rec[i + (size_t)d * CH] - y[i]) * (rec[i + (size_t)d * CH] - y[i]);
			ref += y[i] * y[i];
		}
		worst = fmax(worst, sqrt(err / ref));
	}
	printf("%s: delay %ld frames (latency %ld + clients' offset %ld), %.1f s checked, worst window rel "
	       "L2 "
	       "%.2e\n",
	       when, d, latency, offset, (double)SIG_FRAMES / RATE, worst);
	if (!(worst < TOL) || d != latency + offset || n < SIG_FRAMES + (uint32_t)d)
		die_with_log("the recording does not match the reference at the reported latency");
	gf_jack_rig_close(rig);
}

/* ---- the run ------------------------------------------------------------- */

static void setup_files(uint64_t *rng)
{
	char *d = gf_test_tmpdir("daemon-jack-restart");
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(conf_path, sizeof(conf_path), "%s/gpufir.conf", dir);
	snprintf(log_path, sizeof(log_path), "%s/gpufir.log", dir);
	snprintf(sock_path, sizeof(sock_path), "%s/notify", dir);
	snprintf(status_path, sizeof(status_path), "%s/status", dir);
	char taps_path[700];
	snprintf(taps_path, sizeof(taps_path), "%s/taps.txt", dir);
	gf_test_fill_decaying_taps(h, TAPS, rng);
	memcpy(h + TAPS, h, sizeof(float) * TAPS);
	FILE *f = fopen(taps_path, "w");
	CHECK(f);
	for (int i = 0; i < TAPS; i++)
		fprintf(f, "%.9g\n", h[i]);
	CHECK(fclose(f) == 0);
	f = fopen(conf_path, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %d;\nblock_frames = %d;\nbackend = \"cpu\";\nstatus_socket = \"%s\";\n"
		"input = { device = \"system\"; host_api = \"JACK\"; channels = %d; };\n"
		"output = { device = \"system\"; host_api = \"JACK\"; };\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n",
		RATE, PERIOD, status_path, CH);
	CHECK(fclose(f) == 0);
	x = malloc(sizeof(float) * SIG_FRAMES * CH);
	y = malloc(sizeof(double) * SIG_FRAMES * CH);
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)SIG_FRAMES * CH, rng);
	for (size_t i = 0; i < (size_t)SIG_FRAMES * CH; i++)
		x[i] *= 0.3f;
	gf_test_reference(x, SIG_FRAMES, CH, h, TAPS, y);
}

/* jackd killed: same PID, STATUS= and status socket say why, pings go on. */
static void check_outage(int fds_running)
{
	int wd0 = nl.watchdog;
	double t0 = now_s();
	gf_jack_server_stop(&srv, SIGKILL);
	idle_ms(DOWN_MS);
	if (!alive())
		die_with_log("gpufir exited after losing the JACK server");
	if (!nl.saw_lost || !strstr(nl.last_status, "audio server lost: retrying (attempt "))
		die_with_log("STATUS= does not report the lost audio server");
	char st[GF_STATUS_MAX];
	query_status(st, sizeof(st)); /* the new image bound the socket again */
	int fds = count_fds(gpufir_pid);
	printf("outage: %d WATCHDOG=1 in %.1f s, STATUS='%s', %d descriptors (%d while running)\n",
	       nl.watchdog - wd0, now_s() - t0, nl.last_status, fds, fds_running);
	CHECK(strstr(st, "state: audio server lost, retrying\n") != NULL);
	CHECK(status_num(st, "pid") == gpufir_pid && status_num(st, "respawns") == 1);
	CHECK(status_num(st, "outages") == 1);
	CHECK(nl.watchdog - wd0 >= (int)(DOWN_MS / 1000 / (WATCHDOG_S / 2)) - 1);
	CHECK(fds < fds_running); /* no JACK client of the old image */
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = getenv("GPUFIR_BIN");
	if (!bin)
		gf_test_skip("GPUFIR_BIN not set (run through ctest)");
	uint64_t rng = gf_test_seed("test_daemon_jack_restart");
	setup_files(&rng);
	atexit(cleanup); /* a failed CHECK must not leave jackd or gpufir running */
	/* Fixed names: JACK's registry has 8 slots, reclaimed only by a server of the same name. */
	if (gf_jack_server_start(&srv, "gpufir-restart", RATE, PERIOD) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	notify_fd = open_notify(sock_path);
	gpufir_pid = spawn_gpufir(bin);
	wait_ready(1, 30.0, "start-up");
	check_audio("before the loss");
	int fds_running = count_fds(gpufir_pid);

	check_outage(fds_running);
	if (gf_jack_server_restart(&srv, RATE, PERIOD) != 0)
		die_with_log("jackd did not start again under its name");
	double t_back = now_s();
	wait_ready(2, 20.0, "after the server came back");
	printf("READY=1 again %.1f s after the server came back\n", now_s() - t_back);
	check_audio("after the server came back");
	char st[GF_STATUS_MAX];
	query_status(st, sizeof(st));
	CHECK(strstr(st, "state: running\n") && status_num(st, "pid") == gpufir_pid);
	CHECK(status_num(st, "input_overflows") == 0 && status_num(st, "late_blocks") == 0);
	int fds_after = count_fds(gpufir_pid);
	printf("descriptors: %d before the loss, %d after\n", fds_running, fds_after);
	CHECK(fds_after <= fds_running);

	kill(gpufir_pid, SIGTERM);
	int wst = 0;
	CHECK(waitpid(gpufir_pid, &wst, 0) == gpufir_pid);
	gpufir_pid = -1;
	notify_read(200);
	if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
		die_with_log("gpufir did not exit 0 on SIGTERM");
	printf("notify: READY %d, WATCHDOG %d (longest gap %.2f s), STOPPING %d\n", nl.ready, nl.watchdog,
	       nl.max_wd_gap, nl.stopping);
	CHECK(nl.ready == 2 && nl.stopping == 1 && nl.max_wd_gap < WATCHDOG_S);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "grep -q 'audio resumed after' '%s'", log_path);
	CHECK(system(cmd) == 0);
	cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	free(x);
	free(y);
	puts("test_daemon_jack_restart: ok");
	return 0;
}
