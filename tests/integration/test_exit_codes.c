/*
 * The exit status of each kind of failure, through the real program: the
 * numbers are an interface (systemd units' RestartPreventExitStatus=, the
 * journal's names for them, scripts). A bad configuration is 6, which the
 * journal reads as NOTCONFIGURED, offline, in --check-config and at the live
 * daemon's start-up alike.
 */
#include <sndfile.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "error.h"
#include "run_prog.h"

static char *dir;

static char *write_wav(const char *name)
{
	char *p = gf_test_path(dir, name);
	SF_INFO info = {.samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf);
	float x[2 * 256] = {0.5f, -0.5f};
	CHECK(sf_writef_float(sf, x, 256) == 256);
	sf_close(sf);
	return p;
}

/* A one-shot server at @p path: reads a request first if @p request (the control API's client
 * writes first, the status socket's reader only reads), then answers @p reply. @return its pid. */
static pid_t answer_once(const char *path, int request, const char *reply)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(10); /* gone even if the client never comes */
		int c = accept(fd, NULL, NULL);
		char req[256];
		ssize_t n = 0, r = 1;
		while (c >= 0 && request && r > 0 && !memchr(req, '\n', (size_t)n) &&
		       n < (ssize_t)sizeof(req))
			n += r =
				read(c, req + n, sizeof(req) - (size_t)n); /* the whole line, as the daemon */
		if (c < 0 || (request && r <= 0))
			_exit(1);
		_exit(write(c, reply, strlen(reply)) == (ssize_t)strlen(reply) ? 0 : 1);
	}
	close(fd);
	return pid;
}

static void reap_ok(pid_t pid)
{
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/*
 * --status (--json) without a socket named: the system service's
 * /run/gpufir/status (control), else the user service's
 * $XDG_RUNTIME_DIR/gpufir/status (control). A child answers once there; no
 * answer at all is exit 4.
 */
static void test_status_user_socket(void)
{
	struct run_result r;
	if (access("/run/gpufir/status", F_OK) == 0 || access("/run/gpufir/control", F_OK) == 0) {
		fprintf(stderr, "  --status: a system service's socket exists here; the user's not tried\n");
		return;
	}
	char *rt = gf_test_path(dir, "rt"), *sub = gf_test_path(dir, "rt/gpufir");
	CHECK(mkdir(rt, 0700) == 0 && mkdir(sub, 0700) == 0);
	setenv("XDG_RUNTIME_DIR", rt, 1);
	run_gpufir(ARGS("--status"), &r); /* nothing listens */
	CHECK_RUN(&r, 4, "/run/gpufir/status");
	run_gpufir(ARGS("--status", "--json"), &r);
	CHECK_RUN(&r, 4, "/run/gpufir/control");
	char *st = gf_test_path(sub, "status"), *ctl = gf_test_path(sub, "control");
	pid_t pid = answer_once(st, 0, "gpufir test\nstate: running\n");
	run_gpufir(ARGS("--status"), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.out, "state: running"));
	reap_ok(pid);
	pid = answer_once(ctl, 1,
			  "{\"GetStatus\": {\"result\": \"Ok\", \"value\": {\"state\": \"Running\"}}}\n");
	run_gpufir(ARGS("--status", "--json"), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.out, "\"state\": \"Running\""));
	reap_ok(pid);
	unsetenv("XDG_RUNTIME_DIR");
	free(rt), free(sub), free(st), free(ctl);
}

int main(void)
{
	dir = gf_test_tmpdir("exit_codes");
	char *in = write_wav("in.wav"), *out = gf_test_path(dir, "out.wav");
	char *bad = gf_test_write_text_in(dir, "bad.conf",
					  "filters = ( { name = \"a\"; coeffs = [1.0]; } );\n"
					  "chain = [\"nosuch\"];\n");
	char *nofile = gf_test_write_text_in(dir, "nofile.conf",
					     "filters = ( { name = \"a\"; file = \"missing.txt\"; } );\n"
					     "chain = [\"a\"];\n");
	char *missing = gf_test_path(dir, "missing.conf");
	struct run_result r;

	run_gpufir(ARGS("-i", in), &r); /* no -o */
	CHECK_RUN(&r, 2, "missing -o OUT");
	CHECK(GF_EXIT_USAGE == 2);

	/* a bad config: 6 wherever it is read, and nothing written */
	run_gpufir(ARGS("-c", bad, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "nosuch");
	CHECK(!gf_test_exists(out));
	run_gpufir(ARGS("--check-config", bad), &r);
	CHECK_RUN(&r, 6, "nosuch");
	/* a filter file the config names but that is missing: the config is wrong */
	run_gpufir(ARGS("-c", nofile, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "missing.txt");
	/* the live daemon's start-up: the config is read before any audio device */
	run_gpufir(ARGS("--live", "-c", bad), &r);
	if (r.exit_code == 1 && strstr(r.err, "needs libgpufir-live.so"))
		fprintf(stderr, "  --live: the live module is not built here; not run\n");
	else
		CHECK_RUN(&r, 6, "nosuch");

	/* a missing config file: not configured (6) too, also at the daemon's start */
	run_gpufir(ARGS("-c", missing, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "missing.conf: cannot open the config");
	run_gpufir(ARGS("--live", "-c", missing), &r);
	if (r.exit_code != 1 || !strstr(r.err, "needs libgpufir-live.so"))
		CHECK_RUN(&r, 6, "missing.conf: cannot open the config");
	/* a missing input file: input/output, 4 */
	run_gpufir(ARGS("-i", missing, "-o", out), &r);
	CHECK_RUN(&r, 4, "missing.conf");

	/* the GPU backend demanded without a usable GPU: processing, 5 */
	run_gpufir(ARGS("--backend", "cuda", "-i", in, "-o", out), &r);
	if (r.exit_code == 0)
		fprintf(stderr, "  --backend cuda: a GPU is usable here; exit 5 not run\n");
	else
		CHECK_RUN(&r, 5, "CUDA");
	test_status_user_socket();
	printf("test_exit_codes: ok (usage 2, config 6, input 4, processing 5)\n");
	gf_test_rmtree(dir);
	free(in), free(out), free(bad), free(nofile), free(missing), free(dir);
	return 0;
}
