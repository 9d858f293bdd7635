/*
 * Offline outputs against clobbering and signals (issue "hostile input and
 * a local attacker"), through the real gpufir program. Each case prints its
 * result.
 *
 *   1  -o onto a FIFO, or (as root) a character device node or a symlink to
 *      one: refused with a message, the node is still what it was
 *   4  SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, a second SIGINT
 *      (the process dies by the signal) and one SIGTERM (it stops cleanly)
 *      while the output is being written: no temporary file is left; a
 *      temporary of a dead run (kill -9) is removed by the next run in that
 *      directory, one of a live process or a fresh one is kept
 *   7  (offline) SIGINT/SIGTERM during the set-up (a 16M-tap design) end the
 *      run within a second, exit 130, nothing written
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define FRAMES 96000

static char *dir, *in;

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void expect_node_kept(const char *what, const char *out, mode_t type)
{
	struct run_result r;
	run_gpufir(ARGS("-q", "-i", in, "-o", out), &r);
	struct stat st;
	CHECK(lstat(out, &st) == 0);
	if (type != S_IFLNK)
		CHECK(stat(out, &st) == 0);
	int kept = (st.st_mode & S_IFMT) == type;
	printf("case 1 (-o onto %s): exit %d, node %s: %s", what, r.exit_code, kept ? "kept" : "REPLACED",
	       r.err);
	CHECK_RUN(&r, 4, "regular files only");
	CHECK(kept && gpufir_temp_files(dir) == 0);
}

static void case1(void)
{
	char *fifo = gf_test_path(dir, "out.fifo");
	CHECK(mkfifo(fifo, 0600) == 0);
	expect_node_kept("a FIFO", fifo, S_IFIFO);
	if (geteuid() != 0) {
		printf("case 1 (-o onto a character device, a symlink to one): skipped (needs root)\n");
	} else {
		char *null = gf_test_path(dir, "null");
		CHECK(mknod(null, S_IFCHR | 0666, makedev(1, 3)) == 0);
		expect_node_kept("a character device (a copy of /dev/null)", null, S_IFCHR);
		char *link = gf_test_path(dir, "null.wav");
		CHECK(symlink(null, link) == 0);
		expect_node_kept("a symlink to a character device", link, S_IFLNK);
		free(null);
		free(link);
	}
	free(fifo);
}

/* Start gpufir reading a FIFO that gets the first bytes of IN, so it sits
 * blocked mid-file with its temporary output open. @return its pid */
static pid_t start_blocked(const char *fifo, const char *out, int *wfd, const char *log)
{
	pid_t pid = spawn_gpufir(ARGS("-q", "-i", fifo, "-o", out), log, log);
	*wfd = open(fifo, O_WRONLY);
	CHECK(*wfd >= 0);
	static char head[65536];
	FILE *f = fopen(in, "rb");
	CHECK(f && fread(head, 1, sizeof(head), f) == sizeof(head));
	fclose(f);
	CHECK(write(*wfd, head, sizeof(head)) == (ssize_t)sizeof(head));
	for (int i = 0; i < 1000 && gpufir_temp_files(dir) == 0; i++)
		sleep_ms(10);
	CHECK(gpufir_temp_files(dir) == 1);
	sleep_ms(50);
	return pid;
}

static void case4_signals(void)
{
	static const struct {
		int sig;
		const char *name;
	} sigs[] = {{SIGHUP, "SIGHUP"},	  {SIGPIPE, "SIGPIPE"}, {SIGQUIT, "SIGQUIT"},
		    {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGALRM, "SIGALRM"}};
	char *fifo = gf_test_path(dir, "in.fifo"), *out = gf_test_path(dir, "out.wav");
	char *log = gf_test_path(dir, "log.txt");
	CHECK(mkfifo(fifo, 0600) == 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int wfd;
		pid_t pid = start_blocked(fifo, out, &wfd, log);
		CHECK(kill(pid, sigs[i].sig) == 0);
		int status;
		CHECK(waitpid(pid, &status, 0) == pid);
		close(wfd);
		int left = gpufir_temp_files(dir);
		printf("case 4 (%s mid-file): died by signal %d, temporaries left: %d\n", sigs[i].name,
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0, left);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i].sig && left == 0);
		CHECK(!gf_test_exists(out));
	}
	/* a second SIGINT: "now" */
	int wfd;
	pid_t pid = start_blocked(fifo, out, &wfd, log);
	CHECK(kill(pid, SIGINT) == 0);
	sleep_ms(100);
	CHECK(kill(pid, SIGINT) == 0);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	close(wfd);
	printf("case 4 (SIGINT twice mid-file): died by signal %d, temporaries left: %d\n",
	       WIFSIGNALED(status) ? WTERMSIG(status) : 0, gpufir_temp_files(dir));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT && gpufir_temp_files(dir) == 0);
	/* one SIGTERM: stops at the next chunk (here: when the input ends), exit 130 */
	pid = start_blocked(fifo, out, &wfd, log);
	CHECK(kill(pid, SIGTERM) == 0);
	sleep_ms(100);
	close(wfd);
	CHECK(waitpid(pid, &status, 0) == pid);
	printf("case 4 (SIGTERM mid-file): exit %d, temporaries left: %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, gpufir_temp_files(dir));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 130 && gpufir_temp_files(dir) == 0);
	unlink(fifo);
	unlink(log);
	free(fifo);
	free(out);
	free(log);
}

static char *fake_temp(const char *name, long pid, int age_s)
{
	char base[256];
	snprintf(base, sizeof(base), ".%s.gpufir-%ld-Ab12Cd", name, pid);
	char *p = gf_test_write_text_in(dir, base, "half a file");
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age_s;
	t[1] = t[0];
	CHECK(utimensat(AT_FDCWD, p, t, 0) == 0);
	return p;
}

static void case4_stale(void)
{
	long dead = 0;
	for (long p = 4000000; p > 300000 && !dead; p -= 7919)
		if (kill((pid_t)p, 0) != 0 && errno == ESRCH)
			dead = p;
	CHECK(dead);
	char *old_dead = fake_temp("a.wav", dead, 3600);
	char *new_dead = fake_temp("b.wav", dead, 0);
	char *alive = fake_temp("c.wav", (long)getpid(), 3600);
	char *out = gf_test_path(dir, "next.wav");
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out), &r);
	CHECK_RUN(&r, 0, NULL);
	printf("case 4 (a dead run's temporary, 1 h old): %s; a fresh one: %s; a live pid's: %s\n",
	       gf_test_exists(old_dead) ? "LEFT" : "removed", gf_test_exists(new_dead) ? "kept" : "REMOVED",
	       gf_test_exists(alive) ? "kept" : "REMOVED");
	CHECK(!gf_test_exists(old_dead) && strstr(r.err, "no longer runs"));
	CHECK(gf_test_exists(new_dead) && gf_test_exists(alive));
	unlink(new_dead);
	unlink(alive);
	unlink(out);
	free(old_dead);
	free(new_dead);
	free(alive);
	free(out);
}

static void case7(void)
{
	char *cfg = gf_test_write_text_in(dir, "huge.conf",
					  "filters = ({name=\"a\"; design=\"lowpass\"; cutoff_hz=1000.0; "
					  "taps=16777215;});\nchain=[\"a\"];\n");
	char *out = gf_test_path(dir, "huge_out.wav"), *log = gf_test_path(dir, "huge.log");
	static const int sigs[] = {SIGINT, SIGTERM};
	for (int i = 0; i < 2; i++) {
		pid_t pid = spawn_gpufir(ARGS("-q", "-i", in, "-o", out, "-c", cfg, "--backend", "cpu"), log,
					 log);
		sleep_ms(400);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK(kill(pid, sigs[i]) == 0);
		int status;
		CHECK(waitpid(pid, &status, 0) == pid);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		printf("case 7 (%s during the set-up of a 16M-tap design): exit %d after %.2f s\n",
		       i ? "SIGTERM" : "SIGINT", WIFEXITED(status) ? WEXITSTATUS(status) : -1, dt);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 130 && dt < 1.0);
		CHECK(!gf_test_exists(out) && gpufir_temp_files(dir) == 0);
	}
	unlink(log);
	free(cfg);
	free(out);
	free(log);
}

int main(void)
{
	gpufir_bin();
	dir = gf_test_tmpdir("hostile-offline");
	in = gf_test_path(dir, "in.wav");
	uint64_t rng = gf_test_seed("test_hostile_outputs");
	float *x = gf_test_noise((size_t)FRAMES * 2, &rng);
	for (size_t i = 0; i < (size_t)FRAMES * 2; i++)
		x[i] *= 0.25f;
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 2, FRAMES, x);
	free(x);
	case1();
	case4_signals();
	case4_stale();
	case7();
	gf_test_rmtree(dir);
	free(dir);
	free(in);
	printf("ok\n");
	return 0;
}
