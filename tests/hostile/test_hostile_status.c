/*
 * The status socket against a stuck daemon and a local attacker (issue
 * "hostile input and a local attacker"). Each case prints its result.
 *
 *   9  `gpufir --status` on a daemon whose listen backlog is full (stopped or
 *      stuck): the query gives up at its timeout instead of blocking in connect
 *  10  the stale-socket check removes only a socket that is ours and dead:
 *      a datagram socket (like /dev/log), a live but stuck listener and (as
 *      root) another user's socket are left in place; a dead one of ours goes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "status.h"
#include "testutil.h"

static char *dir;

static int bound(const char *path, int type, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
	int fd = socket(AF_UNIX, type, 0);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)sa, sizeof(*sa)) == 0);
	return fd;
}

/* A listener that never accepts, with its backlog filled. */
static int stuck_listener(const char *path, int *clients, int max, int *n)
{
	struct sockaddr_un sa;
	int fd = bound(path, SOCK_STREAM, &sa);
	CHECK(listen(fd, 0) == 0);
	*n = 0;
	while (*n < max) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		CHECK(c >= 0);
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			CHECK(errno == EAGAIN);
			close(c);
			break;
		}
		clients[(*n)++] = c;
	}
	return fd;
}

static void case9(void)
{
	char *path = gf_test_path(dir, "stuck.sock");
	int clients[64], n;
	int fd = stuck_listener(path, clients, 64, &n);
	char buf[256];
	struct gf_errbuf eb = {""};
	double t0 = gf_now_s();
	int r = gf_status_query(path, buf, sizeof(buf), 500, &eb);
	double dt = gf_now_s() - t0;
	printf("case 9 (--status on a full backlog, %d queued): %s after %.2f s: %s\n", n,
	       r ? "gave up" : "ANSWERED", dt, eb.msg);
	CHECK(r == GF_E_IO && dt < 2.0);
	for (int i = 0; i < n; i++)
		close(clients[i]);
	close(fd);
	unlink(path);
	free(path);
}

static void expect_kept(const char *what, const char *path)
{
	struct gf_status_server *s = NULL;
	struct gf_errbuf eb = {""};
	int r = gf_status_server_new(&s, path, &eb);
	struct stat st;
	int kept = lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
	printf("case 10 (%s at status_socket): %s, socket %s: %s\n", what, r ? "refused" : "TAKEN OVER",
	       kept ? "kept" : "REMOVED", eb.msg);
	CHECK(r != 0 && kept && !s);
}

static void case10(void)
{
	struct sockaddr_un sa;
	char *dg = gf_test_path(dir, "log.sock");
	int fd = bound(dg, SOCK_DGRAM, &sa);
	expect_kept("a datagram socket (like /dev/log)", dg);
	close(fd);

	char *st = gf_test_path(dir, "busy.sock");
	int clients[64], n;
	fd = stuck_listener(st, clients, 64, &n);
	expect_kept("a live listener with a full backlog", st);
	for (int i = 0; i < n; i++)
		close(clients[i]);
	close(fd);

	/* ours and dead: bound, closed, never unlinked (a crash) */
	char *dead = gf_test_path(dir, "dead.sock");
	close(bound(dead, SOCK_STREAM, &sa));
	struct gf_status_server *s = NULL;
	struct gf_errbuf eb = {""};
	CHECK_OK_EB(gf_status_server_new(&s, dead, &eb), &eb);
	printf("case 10 (a dead socket of ours): replaced\n");
	gf_status_server_free(s);

	if (geteuid() != 0) {
		printf("case 10 (another user's dead socket): skipped (needs root)\n");
	} else {
		char *other = gf_test_path(dir, "other.sock");
		close(bound(other, SOCK_STREAM, &sa));
		CHECK(chown(other, 65534, 65534) == 0);
		expect_kept("another user's dead socket", other);
		free(other);
	}
	free(dg);
	free(st);
	free(dead);
}

int main(void)
{
	dir = gf_test_tmpdir("hostile-status");
	case9();
	case10();
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
