/* respawn.c: the backoff sequence, the state's text form (round trip,
 * clamping, malformed values), taking it from the environment, and a real
 * in-place re-execution of this test program: same PID, state handed over,
 * descriptors opened without O_CLOEXEC closed, a signal that arrived while
 * blocked still pending in the new image, GPUFIR_RESPAWN consumed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "respawn.h"
#include "testutil.h"

static void test_backoff(void)
{
	static const uint32_t want[] = {500, 1000, 2000, 4000, 8000, 10000, 10000};
	uint32_t ms = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ms = gf_respawn_next_backoff(ms);
		CHECK(ms == want[i]);
	}
	CHECK(gf_respawn_next_backoff(UINT32_MAX) == GF_RESPAWN_MAX_MS);
	CHECK(gf_respawn_next_backoff(7000) == GF_RESPAWN_MAX_MS);
}

static void test_text(void)
{
	struct gf_respawn a = {.attempt = 3,
			       .backoff_ms = 2000,
			       .respawns = 2,
			       .outages = 5,
			       .ready = 1,
			       .lost_us = 123456789012ull,
			       .started_us = 42},
			  b;
	char buf[256];
	CHECK_OK(gf_respawn_format(&a, buf, sizeof(buf)));
	CHECK_OK(gf_respawn_parse(buf, &b));
	CHECK(b.attempt == a.attempt && b.backoff_ms == a.backoff_ms && b.respawns == a.respawns);
	CHECK(b.outages == a.outages && b.ready == a.ready && b.lost_us == a.lost_us &&
	      b.started_us == a.started_us);
	CHECK(gf_respawn_format(&a, buf, 10) == GF_E_INVAL);

	/* Out of range: clamped, not trusted. */
	CHECK_OK(gf_respawn_parse(
		"attempt=0 backoff_ms=1 respawns=1 outages=1 ready=7 lost_us=1 started_us=1", &b));
	CHECK(b.attempt == 1 && b.backoff_ms == GF_RESPAWN_MIN_MS && b.ready == 1);
	CHECK_OK(gf_respawn_parse(
		"attempt=9 backoff_ms=99999 respawns=1 outages=1 ready=0 lost_us=1 started_us=1", &b));
	CHECK(b.backoff_ms == GF_RESPAWN_MAX_MS && b.ready == 0);

	static const char *bad[] = {
		"",
		"attempt=1",
		"attempt=x backoff_ms=500 respawns=1 outages=1 ready=1 lost_us=1 started_us=1",
		"attempt=1 backoff_ms=500 respawns=1 outages=1 ready=1 lost_us=1 started_us=1 extra",
		"backoff_ms=500 attempt=1 respawns=1 outages=1 ready=1 lost_us=1 started_us=1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b.attempt = 99;
		CHECK(gf_respawn_parse(bad[i], &b) == GF_E_INVAL);
		CHECK(b.attempt == 0);
	}
	CHECK(gf_respawn_parse(NULL, &b) == GF_E_INVAL);
}

static void test_take(void)
{
	struct gf_respawn r;
	unsetenv(GF_RESPAWN_ENV);
	CHECK(gf_respawn_take(&r) == 0 && r.attempt == 0);
	setenv(GF_RESPAWN_ENV,
	       "attempt=2 backoff_ms=1000 respawns=1 outages=1 ready=1 lost_us=5 started_us=4", 1);
	CHECK(gf_respawn_take(&r) == 1 && r.attempt == 2 && r.backoff_ms == 1000 && r.lost_us == 5);
	CHECK(getenv(GF_RESPAWN_ENV) == NULL);
	setenv(GF_RESPAWN_ENV, "garbage", 1);
	CHECK(gf_respawn_take(&r) == 0 && getenv(GF_RESPAWN_ENV) == NULL);
}

/* The re-executed image: argv = self --respawned PID FD. */
static int respawned_main(char **argv)
{
	long pid = strtol(argv[2], NULL, 10);
	int fd = (int)strtol(argv[3], NULL, 10);
	struct gf_respawn r;
	sigset_t pending;
	CHECK(getpid() == pid);
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
	CHECK(gf_respawn_take(&r) == 1);
	CHECK(r.attempt == 4 && r.backoff_ms == 8000 && r.respawns == 3 && r.ready == 1);
	CHECK(getenv(GF_RESPAWN_ENV) == NULL);
	CHECK(strcmp(getenv("GF_TEST_KEEP"), "kept") == 0); /* the rest of the environment stays */
	CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGTERM));
	return 0;
}

static void test_exec(const char *self)
{
	struct gf_errbuf eb = {{0}};
	struct gf_respawn r = {.attempt = 4, .backoff_ms = 8000, .respawns = 3, .outages = 1, .ready = 1};
	CHECK(gf_respawn_exec(NULL, &r, &eb) == GF_E_INVAL && eb.msg[0]);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* As the daemon: SIGTERM blocked (signalfd), and one arrives just
		 * before the exec; a library's descriptor without O_CLOEXEC. */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		raise(SIGTERM);
		int fd = open("/dev/null", O_RDONLY);
		char spid[32], sfd[32];
		snprintf(spid, sizeof(spid), "%ld", (long)getpid());
		snprintf(sfd, sizeof(sfd), "%d", fd);
		setenv(GF_RESPAWN_ENV, "stale", 1); /* replaced, not duplicated */
		setenv("GF_TEST_KEEP", "kept", 1);
		char *argv[] = {(char *)self, "--respawned", spid, sfd, NULL};
		gf_respawn_exec(argv, &r, &eb);
		fprintf(stderr, "exec failed: %s\n", eb.msg);
		_exit(3);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--respawned") == 0)
		return respawned_main(argv);
	test_backoff();
	test_text();
	test_take();
	test_exec(argv[0]);
	puts("test_respawn: ok");
	return 0;
}
