/* `gpufir --live` while its JACK server is stopped, and other outages of
 * what the daemon stands on. As systemd runs it (NOTIFY_SOCKET,
 * WATCHDOG_USEC), against a private JACK server (dummy driver, sync mode).
 * Each case prints what it saw.
 *
 *   1  the status socket's file removed under the running daemon: --status
 *      answers again within 2 s, and the log says the socket was made again
 *   2  SIGXFSZ is ignored by the daemon (a recording at RLIMIT_FSIZE ends
 *      with a message instead of killing it; test_hostile_record has the rest)
 *   3  jackd stopped (SIGSTOP: its process frozen, its sockets open), which
 *      blocked the control thread inside PortAudio (Pa_AbortStream, then
 *      Pa_Initialize in jack_client_open) for minutes: for 8 s every --status
 *      query answers within 1 s (one made while the daemon restarts itself in
 *      place is retried within that second), STATUS= says the audio server is
 *      lost, the watchdog pings go on, the PID stays
 *   4  jackd continued: audio resumes (READY=1 again, blocks advance)
 *   5  jackd stopped again, then SIGTERM: the daemon exits 0 within 2 s */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 64
#define CH 2
#define WATCHDOG_S 2.0 /* WATCHDOG_USEC: pings every 1 s */
#define FROZEN_S 8.0   /* how long jackd stays stopped */

static struct gf_daemon dm;

/* --status, retried until it answers: @return the seconds it took; fail after @p limit_s. */
static double status_within(double limit_s, char *st, size_t len)
{
	double t0 = gf_now_s(), left;
	char why[700] = "";
	while ((left = limit_s - (gf_now_s() - t0)) > 0) {
		struct gf_errbuf eb = {{0}};
		if (gf_status_query(dm.status_path, st, len, (int)(left * 1000) + 1, &eb) == 0)
			return gf_now_s() - t0;
		snprintf(why, sizeof(why), "%s", eb.msg);
		gf_daemon_idle_ms(&dm, 20); /* gone for a moment: the daemon re-executes itself */
	}
	fprintf(stderr, "no status answer within %.1f s: %s\n", limit_s, why);
	gf_daemon_die(&dm, "--status did not answer in time");
}

static int log_has(const char *text)
{
	char cmd[900];
	snprintf(cmd, sizeof(cmd), "grep -q '%s' '%s'", text, dm.log_path);
	return system(cmd) == 0;
}

/* Blocks filtered over @p ms, from the status socket. */
static long blocks_over(int ms)
{
	char st[GF_STATUS_MAX];
	status_within(1.0, st, sizeof(st));
	long b0 = gf_daemon_status_num(st, "blocks");
	gf_daemon_idle_ms(&dm, ms);
	status_within(1.0, st, sizeof(st));
	return gf_daemon_status_num(st, "blocks") - b0;
}

static void case1_socket_removed(void)
{
	char st[GF_STATUS_MAX];
	CHECK(unlink(dm.status_path) == 0);
	double t = status_within(2.5, st, sizeof(st));
	printf("case 1 (status socket removed): --status answers again after %.2f s: %s\n", t,
	       log_has("was removed or replaced: listening there again") ? "re-created, logged"
									 : "NOT LOGGED");
	CHECK(t < 2.5 && log_has("was removed or replaced: listening there again"));
}

static void case2_sigxfsz(void)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)dm.pid);
	FILE *f = fopen(path, "r");
	CHECK(f);
	unsigned long long ign = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigIgn: %llx", &ign) == 1)
			break;
	fclose(f);
	int ignored = (ign >> (SIGXFSZ - 1)) & 1;
	printf("case 2 (SIGXFSZ): %s by the daemon\n", ignored ? "ignored" : "NOT IGNORED");
	CHECK(ignored);
}

static void case3_frozen(void)
{
	int wd0 = dm.nl.watchdog, queries = 0;
	double worst = 0, t0 = gf_now_s();
	char st[GF_STATUS_MAX];
	CHECK(kill(dm.jack.pid, SIGSTOP) == 0);
	while (gf_now_s() - t0 < FROZEN_S) {
		double t = status_within(1.0, st, sizeof(st));
		worst = t > worst ? t : worst;
		queries++;
		gf_daemon_idle_ms(&dm, 200);
	}
	gf_daemon_notify_read(&dm, 0);
	printf("case 3 (jackd stopped for %.0f s): %d status queries, slowest answered in %.3f s; last "
	       "state '%.*s'; %d WATCHDOG=1; STATUS='%s'\n",
	       FROZEN_S, queries, worst, (int)strcspn(strstr(st, "state: ") + 7, "\n"),
	       strstr(st, "state: ") + 7, dm.nl.watchdog - wd0, dm.nl.last_status);
	CHECK(gf_daemon_alive(&dm) && gf_daemon_status_num(st, "pid") == dm.pid);
	CHECK(strstr(st, "state: audio server lost, retrying\n") != NULL);
	CHECK(strstr(dm.nl.last_status, "audio server lost: retrying"));
	CHECK(dm.nl.watchdog - wd0 >= (int)(FROZEN_S / (WATCHDOG_S / 2)) - 2);
}

static void case4_back(void)
{
	double t0 = gf_now_s();
	CHECK(kill(dm.jack.pid, SIGCONT) == 0);
	gf_daemon_wait_ready(&dm, 2, 40.0, "after jackd was continued");
	long blocks = blocks_over(1000);
	char st[GF_STATUS_MAX];
	status_within(1.0, st, sizeof(st));
	printf("case 4 (jackd continued): READY=1 again after %.1f s, %ld blocks in the next second, "
	       "pid %ld (%s), restarts in place %ld\n",
	       gf_now_s() - t0, blocks, gf_daemon_status_num(st, "pid"),
	       gf_daemon_status_num(st, "pid") == dm.pid ? "the same" : "ANOTHER",
	       gf_daemon_status_num(st, "respawns"));
	CHECK(strstr(st, "state: running\n") && gf_daemon_status_num(st, "pid") == dm.pid);
	CHECK(blocks > RATE / PERIOD / 2);
}

static void case5_sigterm(void)
{
	CHECK(kill(dm.jack.pid, SIGSTOP) == 0);
	gf_daemon_idle_ms(&dm, 3000); /* the daemon notices (2 s) and is closing its stream */
	double t0 = gf_now_s();
	gf_daemon_terminate(&dm, 2.0, " with its JACK server stopped");
	printf("case 5 (SIGTERM with jackd stopped): exit 0 after %.2f s\n", gf_now_s() - t0);
	CHECK(kill(dm.jack.pid, SIGCONT) == 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "daemon-outage");
	dm.nl.watch = "audio server lost: retrying (attempt ";
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f, "filters = ( { name = \"f\"; coeffs = [0.5, 0.25]; } );\nchain = [\"f\"];\n");
	CHECK(fclose(f) == 0);
	if (gf_jack_server_start(&dm.jack, "gpufir-outage", RATE, PERIOD) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	case1_socket_removed();
	case2_sigxfsz();
	case3_frozen();
	case4_back();
	case5_sigterm();
	printf("notify: READY %d, WATCHDOG %d (longest gap %.2f s, ended %.1f s before the end)\n",
	       dm.nl.ready, dm.nl.watchdog, dm.nl.max_wd_gap, gf_now_s() - dm.nl.max_wd_gap_end);
	CHECK(dm.nl.max_wd_gap < WATCHDOG_S);
	/* A server stopped twice under its clients ignores SIGTERM: gf_daemon_finish's would wait out
	 * its 5 s before the SIGKILL. */
	gf_jack_server_stop(&dm.jack, SIGKILL);
	gf_daemon_finish(&dm);
	puts("test_daemon_outage: ok");
	return 0;
}
