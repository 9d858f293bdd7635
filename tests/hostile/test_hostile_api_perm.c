/*
 * The control API's Unix socket against a user who is not the daemon's
 * (docs/api.md, "Who may connect"): the daemon runs with umask 077, as the service unit
 * sets it (UMask=0077), and makes its socket with that umask only. A child
 * drops to an unprivileged user (nobody, 65534) and connects:
 *
 *   1  to a socket of the test's own, mode 0666, in the same directory: it
 *      connects (the directory is no obstacle, so what follows proves the mode)
 *   2  to the control socket: refused with EACCES
 *
 * and the daemon keeps answering its own user afterwards. Needs root to drop
 * privileges: skipped (77) otherwise.
 */
#define _GNU_SOURCE /* setgroups */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "apiclient.h"
#include "daemonutil.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define NOBODY 65534

enum child_rc { C_OK = 0, C_NO_DROP = 10, C_OPEN_REFUSED, C_CONNECTED, C_OTHER_ERRNO };

static struct gf_daemon dm;
static char sock_dir[64] = "/tmp/gpufir-perm-XXXXXX";
static char ctl_path[128], open_path[128];

static int unix_connect(const char *path, int *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	CHECK(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		*err = 0;
		return fd;
	}
	*err = errno;
	close(fd);
	return -1;
}

/* A listening socket at @p path that anyone may connect to. */
static int open_listener(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	CHECK(chmod(path, 0666) == 0);
	return fd;
}

/* The unprivileged child: its findings as its exit code. */
static int child(void)
{
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0 || getuid() != NOBODY ||
	    geteuid() != NOBODY || setuid(0) == 0) {
		printf("child: cannot drop to uid %d: %s\n", NOBODY, strerror(errno));
		return C_NO_DROP;
	}
	int err, fd = unix_connect(open_path, &err);
	if (fd < 0) {
		printf("child: the 0666 socket refused too: %s\n", strerror(err));
		return C_OPEN_REFUSED;
	}
	close(fd);
	fd = unix_connect(ctl_path, &err);
	if (fd >= 0) {
		printf("child: connected to the control socket as uid %d\n", NOBODY);
		close(fd);
		return C_CONNECTED;
	}
	printf("child (uid %d): the control socket: %s\n", NOBODY, strerror(err));
	return err == EACCES ? C_OK : C_OTHER_ERRNO;
}

static void state_running(struct gf_apiclient *api, const char *when)
{
	gf_apic_expect(api, gf_apic_call(api, "\"GetState\""), "\"value\":\"Running\"", when);
	gf_apic_expect(api, gf_apic_call(api, "\"GetVersion\""), GPUFIR_VERSION, when);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (geteuid() != 0)
		gf_test_skip("not root: cannot drop to an unprivileged user");
	const char *bin = gf_daemon_test_bin(0);
	uint64_t rng = gf_test_seed("test_hostile_api_perm");
	float h[32];
	gf_daemon_init(&dm, "hostile-api-perm");
	gf_test_fill_decaying_taps(h, 32, &rng);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, 32);
	/* The sockets' directory: searchable by anyone, so that only a socket's own mode refuses. */
	CHECK(mkdtemp(sock_dir) && chmod(sock_dir, 0711) == 0);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", sock_dir);
	snprintf(open_path, sizeof(open_path), "%s/open", sock_dir);
	int lfd = open_listener(open_path);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, 256, "cpu", CH, "system");
	fprintf(f,
		"control_socket = \"%s\";\nfilters = ( { name = \"f\"; file = \"taps.txt\"; format = "
		"\"text\"; "
		"} );\nchain = [\"f\"];\n",
		ctl_path);
	CHECK(fclose(f) == 0);
	if (gf_jack_server_start(&dm.jack, "gpufir-hperm", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	mode_t old = umask(077); /* the service's UMask, inherited by the daemon */
	gf_daemon_spawn(&dm, bin, 0);
	umask(old);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");

	struct gf_apiclient api;
	gf_apic_init(&api, &dm, ctl_path);
	state_running(&api, "the daemon's own user, before");
	struct stat st;
	CHECK(stat(ctl_path, &st) == 0 && S_ISSOCK(st.st_mode));
	printf("control socket: mode %04o, uid %u\n", (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
	if (st.st_mode & 077)
		gf_daemon_die(&dm, "the control socket is open to others under umask 077");

	int ws = gf_test_fork_wait(child);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != C_OK) {
		printf("the unprivileged child: status 0x%x\n", ws);
		gf_daemon_die(&dm, "an unprivileged user was not refused with EACCES");
	}
	/* Refused at the file's mode, the daemon saw nothing: it answers as before, and runs. */
	state_running(&api, "the daemon's own user, after");
	CHECK(gf_daemon_alive(&dm));
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	close(lfd);
	CHECK(unlink(open_path) == 0 && rmdir(sock_dir) == 0);
	printf("test_hostile_api_perm: ok\n");
	return 0;
}
