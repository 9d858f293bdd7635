/* `gpufir --live` while its JACK server is stopped, and other outages of
 * what the daemon stands on. As systemd runs it (NOTIFY_SOCKET,
 * WATCHDOG_USEC), against a private JACK server (dummy driver, sync mode).
 * Each case prints what it saw.
 *
 *   1  SIGTERM while the audio server answers the start-up's open late (test
 *      hook GPUFIR_FAULT_LATE_OPEN_AFTER=0 and _MS=3000: the open's thread
 *      waits 6 s before it starts the stream it opened): --status answers
 *      meanwhile, and the daemon leaves the open behind and exits 0 within 2 s
 *   2  a stream's open that the audio server answers late (test hook
 *      GPUFIR_FAULT_LATE_OPEN_AFTER: the open of a reload's stream restart is
 *      left behind after 1 s, its thread still opening; with
 *      GPUFIR_FAULT_LATE_OPEN_RESTARTS=1 the next image's open too): --status
 *      answers every second throughout, the daemon restarts in place (same
 *      PID) twice, the backoff doubling (attempt 1 in 0.5 s, attempt 2 in
 *      1.0 s), audio flows again (READY=1), and SIGTERM then exits 0 within 2 s
 *   3  the status socket's file removed under the running daemon: --status
 *      answers again within 2 s, and the log says the socket was made again
 *   4  SIGXFSZ is ignored by the daemon (a recording at RLIMIT_FSIZE ends
 *      with a message instead of killing it; test_hostile_record has the rest)
 *   5  jackd stopped (SIGSTOP: its process frozen, its sockets open), which
 *      blocked the control thread inside PortAudio (Pa_AbortStream, then
 *      Pa_Initialize in jack_client_open) for minutes: for 8 s every --status
 *      query answers within 1 s (one made while the daemon restarts itself in
 *      place is retried within that second), STATUS= says the audio server is
 *      lost, the watchdog pings go on, the PID stays
 *   6  jackd continued: audio resumes (READY=1 again, blocks advance)
 *   7  jackd stopped again, then SIGTERM: the daemon exits 0 within 2 s */
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

static void write_conf(unsigned block, int fresh)
{
	FILE *f = fresh ? gf_daemon_conf_begin(&dm, RATE, block, "cpu", CH, "system")
			: gf_daemon_conf_begin_new(&dm, RATE, block, "cpu", CH, "system");
	fprintf(f, "filters = ( { name = \"f\"; coeffs = [0.5, 0.25]; } );\nchain = [\"f\"];\n");
	if (fresh)
		CHECK(fclose(f) == 0);
	else
		gf_daemon_conf_end_new(&dm, f);
}

/* The daemon that left an open behind has exited: wait until jackd has dropped its client (its
 * ports gone), or the next daemon's client of the same name is refused (seen under ASan). */
static void wait_client_dropped(void)
{
	jack_status_t jst;
	jack_client_t *c =
		jack_client_open("outage-probe", JackNoStartServer | JackServerName, &jst, dm.jack.name);
	CHECK(c);
	double t0 = gf_now_s();
	const char **ports;
	while ((ports = jack_get_ports(c, "^gpufir:", NULL, 0)) != NULL) {
		jack_free(ports);
		if (gf_now_s() - t0 > 15.0)
			gf_daemon_die(&dm, "jackd kept the client of an exited daemon for 15 s");
		gf_daemon_idle_ms(&dm, 20);
	}
	jack_client_close(c);
}

/* SIGTERM during the start-up's open, which the hook makes late. */
static void case1_sigterm_in_open(const char *bin)
{
	setenv("GPUFIR_FAULT_LATE_OPEN_AFTER", "0", 1);
	setenv("GPUFIR_FAULT_LATE_OPEN_MS", "3000", 1);
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	unsetenv("GPUFIR_FAULT_LATE_OPEN_AFTER");
	unsetenv("GPUFIR_FAULT_LATE_OPEN_MS");
	double t0 = gf_now_s();
	while (!log_has("gpufir: volume ")) { /* logged just before the open */
		if (gf_now_s() - t0 > 30.0 || !gf_daemon_alive(&dm))
			gf_daemon_die(&dm, "the daemon did not come to its stream's open");
		gf_daemon_idle_ms(&dm, 20);
	}
	gf_daemon_idle_ms(&dm, 300);
	char st[GF_STATUS_MAX];
	double t = status_within(1.0, st, sizeof(st));
	CHECK(strstr(st, "state: starting\n") != NULL);
	double t1 = gf_now_s();
	gf_daemon_terminate(&dm, 2.0, " during a late open");
	double exit_s = gf_now_s() - t1;
	int left = log_has("opening the audio stream did not return within");
	printf("case 1 (SIGTERM during a late open): --status answered in %.3f s; exit 0 after %.2f s, "
	       "the open %s\n",
	       t, exit_s, left ? "left behind" : "NOT LEFT BEHIND");
	CHECK(left);
	wait_client_dropped();
}

/* The reload's stream restart opens late (the hook), and so does the next image's first attempt:
 * left behind, restart in place twice with the backoff growing, audio again, --status answering
 * all along; then SIGTERM. */
static void case2_late_open(const char *bin)
{
	setenv("GPUFIR_FAULT_LATE_OPEN_AFTER", "1", 1);	   /* the start-up's open is on time */
	setenv("GPUFIR_FAULT_LATE_OPEN_RESTARTS", "1", 1); /* the first restart's image opens late */
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	unsetenv("GPUFIR_FAULT_LATE_OPEN_AFTER");
	unsetenv("GPUFIR_FAULT_LATE_OPEN_RESTARTS");
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up (late open case)");
	write_conf(2 * PERIOD, 0); /* a new block size: the stream restarts */
	double t0 = gf_now_s(), worst = 0;
	int queries = 0;
	char st[GF_STATUS_MAX];
	/* READY=1 comes twice: the failed reload's, and the new image's once audio flows. */
	for (;;) {
		if (gf_now_s() - t0 > 30.0 || !gf_daemon_alive(&dm))
			gf_daemon_die(&dm, "audio did not flow again after the open left behind");
		double t = status_within(1.0, st, sizeof(st));
		worst = t > worst ? t : worst;
		queries++;
		CHECK(gf_daemon_status_num(st, "pid") == dm.pid);
		if (gf_daemon_status_num(st, "respawns") >= 2 && strstr(st, "state: running\n"))
			break;
		gf_daemon_idle_ms(&dm, 200);
	}
	double back = gf_now_s() - t0;
	gf_daemon_wait_ready(&dm, 3, 5.0, "audio flowing again after the open left behind");
	int left = log_has("opening the audio stream did not return within 1.0 s");
	/* Each open left behind is a failed attempt: the next waits twice as long. */
	int backoff =
		log_has("to reconnect: attempt 1 in 0.5 s") && log_has("to reconnect: attempt 2 in 1.0 s");
	status_within(1.0, st, sizeof(st));
	printf("case 2 (opens left behind): %s; backoff %s; audio again after %.1f s, same PID, %ld "
	       "restarts in place; %d status queries, slowest %.3f s\n",
	       left ? "left behind after 1.0 s" : "NOT LEFT BEHIND",
	       backoff ? "0.5 s, then 1.0 s" : "NOT DOUBLED", back, gf_daemon_status_num(st, "respawns"),
	       queries, worst);
	CHECK(left && backoff && gf_daemon_status_num(st, "block_frames") == 2 * PERIOD);
	double t1 = gf_now_s();
	gf_daemon_terminate(&dm, 2.0, " after an open left behind");
	printf("case 2: SIGTERM then: exit 0 after %.2f s\n", gf_now_s() - t1);
	wait_client_dropped();
	write_conf(PERIOD, 1);
}

static void case3_socket_removed(void)
{
	char st[GF_STATUS_MAX];
	CHECK(unlink(dm.status_path) == 0);
	double t = status_within(2.5, st, sizeof(st));
	printf("case 3 (status socket removed): --status answers again after %.2f s: %s\n", t,
	       log_has("was removed or replaced: listening there again") ? "re-created, logged"
									 : "NOT LOGGED");
	CHECK(t < 2.5 && log_has("was removed or replaced: listening there again"));
}

static void case4_sigxfsz(void)
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
	printf("case 4 (SIGXFSZ): %s by the daemon\n", ignored ? "ignored" : "NOT IGNORED");
	CHECK(ignored);
}

static void case5_frozen(void)
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
	printf("case 5 (jackd stopped for %.0f s): %d status queries, slowest answered in %.3f s; last "
	       "state '%.*s'; %d WATCHDOG=1; STATUS='%s'\n",
	       FROZEN_S, queries, worst, (int)strcspn(strstr(st, "state: ") + 7, "\n"),
	       strstr(st, "state: ") + 7, dm.nl.watchdog - wd0, dm.nl.last_status);
	CHECK(gf_daemon_alive(&dm) && gf_daemon_status_num(st, "pid") == dm.pid);
	CHECK(strstr(st, "state: audio server lost, retrying\n") != NULL);
	CHECK(strstr(dm.nl.last_status, "audio server lost: retrying"));
	CHECK(dm.nl.watchdog - wd0 >= (int)(FROZEN_S / (WATCHDOG_S / 2)) - 2);
}

static void case6_back(void)
{
	double t0 = gf_now_s();
	CHECK(kill(dm.jack.pid, SIGCONT) == 0);
	gf_daemon_wait_ready(&dm, 2, 40.0, "after jackd was continued");
	long blocks = blocks_over(1000);
	char st[GF_STATUS_MAX];
	status_within(1.0, st, sizeof(st));
	printf("case 6 (jackd continued): READY=1 again after %.1f s, %ld blocks in the next second, "
	       "pid %ld (%s), restarts in place %ld\n",
	       gf_now_s() - t0, blocks, gf_daemon_status_num(st, "pid"),
	       gf_daemon_status_num(st, "pid") == dm.pid ? "the same" : "ANOTHER",
	       gf_daemon_status_num(st, "respawns"));
	CHECK(strstr(st, "state: running\n") && gf_daemon_status_num(st, "pid") == dm.pid);
	CHECK(blocks > RATE / PERIOD / 2);
}

static void case7_sigterm(void)
{
	CHECK(kill(dm.jack.pid, SIGSTOP) == 0);
	gf_daemon_idle_ms(&dm, 3000); /* the daemon notices (2 s) and is closing its stream */
	double t0 = gf_now_s();
	gf_daemon_terminate(&dm, 2.0, " with its JACK server stopped");
	printf("case 7 (SIGTERM with jackd stopped): exit 0 after %.2f s\n", gf_now_s() - t0);
	CHECK(kill(dm.jack.pid, SIGCONT) == 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "daemon-outage");
	dm.nl.watch = "audio server lost: retrying (attempt ";
	write_conf(PERIOD, 1);
	if (gf_jack_server_start(&dm.jack, "gpufir-outage", RATE, PERIOD) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	case1_sigterm_in_open(bin);
	case2_late_open(bin);
	const char *watch = dm.nl.watch;
	memset(&dm.nl, 0, sizeof(dm.nl)); /* the next daemon's counts from here */
	dm.nl.watch = watch;
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	case3_socket_removed();
	case4_sigxfsz();
	case5_frozen();
	case6_back();
	case7_sigterm();
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
