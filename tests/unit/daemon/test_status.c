/* status_socket.c: the one-shot status protocol, stale-socket replacement, refusal
 * to steal a live daemon's socket, the client's errors, and a socket file
 * removed under a running server: noticed and made again. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "error.h"
#include "status.h"
#include "testutil.h"

struct query {
	const char *path;
	char buf[GF_STATUS_MAX];
	int err;
};

static void *client(void *arg)
{
	struct query *q = arg;
	struct gf_errbuf eb = {{0}};
	q->err = gf_status_query(q->path, q->buf, sizeof(q->buf), 3000, &eb);
	return NULL;
}

/* Serve until the client thread has its answer. */
static void query_once(struct gf_status_server *s, const char *text, struct query *q)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, client, q) == 0);
	int served = 0;
	for (int i = 0; i < 300 && !served; i++) {
		served = gf_status_server_serve(s, text);
		usleep(10000);
	}
	CHECK(served == 1);
	CHECK(pthread_join(t, NULL) == 0);
}

/* The path is no longer the server's socket: unreachable, and it says so. */
static void expect_lost(struct gf_status_server *s, const char *path, const char *what)
{
	struct gf_errbuf eb = {{0}};
	char buf[64];
	int err = gf_status_query(path, buf, sizeof(buf), 300, &eb);
	printf("status socket %s: bound %d; a query: %s\n", what, gf_status_server_bound(s),
	       err ? eb.msg : buf);
	CHECK(!gf_status_server_bound(s));
}

/*
 * Someone removes the socket file (cleaning /run/gpufir): queries fail until
 * the server notices and listens again. A file put in its place (another
 * daemon's socket, a regular file) is neither taken over nor removed.
 */
static void renewal(const char *path)
{
	struct gf_errbuf eb = {{0}};
	struct gf_status_server *s = NULL, *other = NULL;
	CHECK_OK_EB(gf_status_server_new(&s, path, &eb), &eb);
	CHECK(gf_status_server_bound(s) && gf_status_server_renew(&s, &eb) == 0);
	CHECK(unlink(path) == 0);
	expect_lost(s, path, "file removed");
	CHECK(gf_status_server_renew(&s, &eb) == 1 && gf_status_server_bound(s));
	struct query q = {.path = path};
	query_once(s, "state: running\n", &q);
	CHECK_OK(q.err);
	printf("status socket renewed: answers '%s'\n", strtok(q.buf, "\n"));

	CHECK(unlink(path) == 0);
	CHECK_OK_EB(gf_status_server_new(&other, path, &eb), &eb); /* another daemon took the path */
	expect_lost(s, path, "taken by another daemon");
	CHECK(gf_status_server_renew(&s, &eb) == GF_E_BUSY && s);
	printf("  renewal refused: %s\n", eb.msg);
	gf_status_server_free(s);
	CHECK(gf_status_server_bound(other)); /* not removed by the one that lost it */
	gf_status_server_free(other);

	CHECK_OK_EB(gf_status_server_new(&s, path, &eb), &eb);
	CHECK(unlink(path) == 0);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	expect_lost(s, path, "replaced by a regular file");
	CHECK(gf_status_server_renew(&s, &eb) == GF_E_INVAL && s);
	printf("  renewal refused: %s\n", eb.msg);
	gf_status_server_free(s);
	CHECK(access(path, F_OK) == 0); /* the regular file stays */
	CHECK(unlink(path) == 0);
}

int main(void)
{
	char *dir = gf_test_tmpdir("status");
	char path[600];
	snprintf(path, sizeof(path), "%s/status", dir);
	struct gf_errbuf eb = {{0}};
	struct gf_status_server *s = NULL;

	CHECK_OK_EB(gf_status_server_new(&s, path, &eb), &eb);
	struct stat st;
	CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0660);
	CHECK(gf_status_server_serve(s, "x") == 0); /* nobody asked */

	/* A block larger than one read() arrives whole. */
	static char text[GF_STATUS_MAX];
	size_t n = 0;
	for (int i = 0; n + 40 < sizeof(text) - 1; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "key_%d: value %d\n", i, i * 7);
	struct query q = {.path = path};
	query_once(s, text, &q);
	CHECK_OK(q.err);
	CHECK(strcmp(q.buf, text) == 0);

	/* A second daemon must not take over a socket that answers. */
	struct gf_status_server *s2 = NULL;
	CHECK(gf_status_server_new(&s2, path, &eb) == GF_E_BUSY);
	CHECK(strstr(eb.msg, "another gpufir daemon") != NULL);
	CHECK(s2 == NULL);

	gf_status_server_free(s);
	CHECK(access(path, F_OK) != 0); /* removed on free */

	/* The client reports a missing daemon clearly. */
	eb.msg[0] = '\0';
	char buf[64];
	CHECK(gf_status_query(path, buf, sizeof(buf), 500, &eb) == GF_E_IO);
	CHECK(strstr(eb.msg, "is the gpufir daemon running") != NULL);

	/* A stale socket file left by a crash is replaced. */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(fd); /* bound, never listened: nobody answers */
	CHECK_OK_EB(gf_status_server_new(&s, path, &eb), &eb);
	struct query q2 = {.path = path};
	query_once(s, "state: running\n", &q2);
	CHECK_OK(q2.err);
	CHECK(strcmp(q2.buf, "state: running\n") == 0);
	gf_status_server_free(s);

	renewal(path);

	/* A regular file at the path is not ours to remove. */
	FILE *f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	CHECK(gf_status_server_new(&s, path, &eb) == GF_E_INVAL);
	CHECK(access(path, F_OK) == 0);
	unlink(path);
	rmdir(dir);
	free(dir);
	puts("test_status: ok");
	return 0;
}
