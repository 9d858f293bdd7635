/* notify.c against a NOTIFY_SOCKET listener: the exact datagrams systemd
 * would receive, the watchdog environment, and the no-systemd no-op; and a
 * listener that does not read: no call blocks, and once it reads, one flush
 * delivers the newest state, merged. */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"
#include "testutil.h"

static int listen_dgram(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* Next datagram, or "" if none arrives within 1 s. */
static const char *recv_msg(int fd)
{
	static char buf[2048];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	buf[0] = '\0';
	if (poll(&p, 1, 1000) == 1) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		CHECK(n >= 0);
		buf[n] = '\0';
	}
	return buf;
}

static void expect(int fd, const char *want)
{
	const char *got = recv_msg(fd);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "notify: got '%s', want '%s'\n", got, want);
		exit(1);
	}
}

static void check_reloading(int fd)
{
	uint64_t before = gf_notify_monotonic_usec();
	CHECK_OK(gf_notify_reloading());
	uint64_t after = gf_notify_monotonic_usec();
	const char *got = recv_msg(fd);
	uint64_t usec = 0;
	char tail = 0;
	/* Exactly two assignments: RELOADING=1 and MONOTONIC_USEC=<now>. */
	CHECK(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%" SCNu64 "%c", &usec, &tail) == 1);
	CHECK(usec >= before && usec <= after);
}

static void check_watchdog_env(void)
{
	char pid[32];
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CHECK(gf_notify_watchdog_usec() == 0);
	setenv("WATCHDOG_USEC", "4000000", 1);
	CHECK(gf_notify_watchdog_usec() == 4000000);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	CHECK(gf_notify_watchdog_usec() == 4000000);
	/* A watchdog meant for another process (our parent) is not ours. */
	snprintf(pid, sizeof(pid), "%ld", (long)getppid());
	setenv("WATCHDOG_PID", pid, 1);
	CHECK(gf_notify_watchdog_usec() == 0);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "FAIL: a notify call blocked on a listener that does not read\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

/* What the listener has queued: how many datagrams, and the last one in @p last. */
static int drain(int fd, char *last, size_t size)
{
	int n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (poll(&p, 1, 0) == 1) {
		ssize_t r = recv(fd, last, size - 1, 0);
		CHECK(r >= 0);
		last[r] = '\0';
		n++;
	}
	return n;
}

/* 200 calls into a queue that fills after a few (the kernel's max_dgram_qlen, 10 by default): each
 * returns at once (an alarm ends the test if one blocks); then the listener drains its queue and
 * one flush sends what waited, in order, each run of statuses as its newest. */
static void check_full_queue(int fd)
{
	signal(SIGALRM, on_alarm);
	alarm(10);
	int kept = 0;
	char text[64], last[2048];
	for (int i = 0; i < 200; i++) {
		snprintf(text, sizeof(text), "status %d", i);
		kept += gf_notify_status(text) == GF_E_BUSY;
		if (i == 150)
			kept += gf_notify_reloading() == GF_E_BUSY;
		if (i == 160)
			kept += gf_notify_watchdog() == GF_E_BUSY;
		if (i == 170)
			kept += gf_notify_ready() == GF_E_BUSY;
	}
	alarm(0);
	CHECK(kept > 150 && gf_notify_pending());
	int queued = drain(fd, last, sizeof(last));
	CHECK(gf_notify_flush() == 0 && !gf_notify_pending());
	expect(fd, "STATUS=status 150");
	CHECK(strncmp(recv_msg(fd), "RELOADING=1\nMONOTONIC_USEC=", 27) == 0);
	expect(fd, "STATUS=status 160");
	expect(fd, "WATCHDOG=1");
	expect(fd, "STATUS=status 170");
	expect(fd, "READY=1");
	expect(fd, "STATUS=status 199");
	CHECK(recv_msg(fd)[0] == '\0'); /* nothing else was kept */
	printf("full queue: %d datagrams queued, %d calls kept theirs; after one flush the rest in order\n",
	       queued, kept);

	/* A receiver that never reads: at most 32 wait, the oldest given up (READY is never merged). */
	alarm(10);
	for (int i = 0; i < 100; i++)
		gf_notify_ready();
	alarm(0);
	int direct = drain(fd, last, sizeof(last)), ready = 0;
	for (int round = 0; gf_notify_pending() && round < 10; round++) {
		gf_notify_flush();
		ready += drain(fd, last, sizeof(last));
	}
	printf("100 READY=1 into a full queue: %d went at once, %d waited and went once it was read\n",
	       direct, ready);
	CHECK(!gf_notify_pending() && ready == 32 && direct + ready < 100);
}

int main(void)
{
	char *dir = gf_test_tmpdir("notify");
	char path[512];
	snprintf(path, sizeof(path), "%s/notify.sock", dir);

	/* Outside systemd every call is a successful no-op. */
	unsetenv("NOTIFY_SOCKET");
	CHECK_OK(gf_notify_ready());
	CHECK_OK(gf_notify_reloading());
	CHECK_OK(gf_notify_status("x"));
	CHECK_OK(gf_notify_watchdog());

	int fd = listen_dgram(path);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK_OK(gf_notify_ready());
	expect(fd, "READY=1");
	check_reloading(fd);
	CHECK_OK(gf_notify_ready());
	expect(fd, "READY=1");
	CHECK_OK(gf_notify_status("48000 Hz, 2 ch, 4095 taps"));
	expect(fd, "STATUS=48000 Hz, 2 ch, 4095 taps");
	/* STATUS is one line: an embedded newline must not become a second assignment. */
	CHECK_OK(gf_notify_status("reload failed: a.conf:3: bad\nREADY=1"));
	expect(fd, "STATUS=reload failed: a.conf:3: bad READY=1");
	CHECK_OK(gf_notify_watchdog());
	expect(fd, "WATCHDOG=1");
	CHECK_OK(gf_notify_stopping());
	expect(fd, "STOPPING=1");
	CHECK(recv_msg(fd)[0] == '\0'); /* nothing else was sent */
	check_full_queue(fd);

	check_watchdog_env();

	close(fd);
	unlink(path);
	rmdir(dir);
	free(dir);
	puts("test_notify: ok");
	return 0;
}
