/*
 * The live recording (output.file) against restarts and a local attacker
 * (issue "hostile input and a local attacker"). Each case prints its result.
 *
 *   2  a second recorder on the same path (a stream restart, a reload, a
 *      re-exec): the first recording keeps every byte; the new one rolls to
 *      NAME.1.wav, then NAME.2.wav
 *   3  output.file is the config itself, a filter file or an @include: the
 *      config is refused; a symlink at the path (to a victim file) is never
 *      followed, the victim is unchanged; a FIFO at the path does not hang;
 *      the recording is created owner-only
 *   4  a recording that reaches RLIMIT_FSIZE: with the daemon's signal set-up
 *      (SIGXFSZ ignored) the write fails with EFBIG, the recording ends with
 *      a message and a valid file, and the audio side goes on (the ring is
 *      still drained); with the default disposition SIGXFSZ kills the
 *      process, as it killed the daemon before
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sndfile.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "error.h"
#include "recorder.h"
#include "ring.h"
#include "testutil.h"

#define CH 2
#define RATE 48000

static char *dir;

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: opening the recording hung\n";
	if (write(2, m, sizeof(m) - 1) < 0) {
	}
	_exit(1);
}

/* Record @p frames of a ramp to @p path; @return the file actually written (malloc'ed). */
static char *record(const char *path, uint32_t frames)
{
	struct gf_ring *ring;
	struct gf_recorder *rec;
	struct gf_errbuf eb = {""};
	CHECK_OK(gf_ring_new(&ring, 8192, CH));
	alarm(10);
	CHECK_OK_EB(gf_recorder_new(&rec, path, RATE, ring, &eb), &eb);
	alarm(0);
	CHECK_OK_EB(gf_recorder_start(rec, &eb), &eb);
	float x[256 * CH];
	for (uint32_t done = 0; done < frames;) {
		uint32_t n = frames - done < 256 ? frames - done : 256;
		for (uint32_t i = 0; i < n * CH; i++)
			x[i] = (float)(done * CH + i) * 1e-6f;
		if (gf_ring_write_space(ring) < n) {
			gf_recorder_kick(rec);
			usleep(1000);
			continue;
		}
		CHECK(gf_ring_write(ring, x, n) == n);
		done += n;
	}
	gf_recorder_stop(rec);
	char *got = strdup(gf_recorder_path(rec));
	gf_recorder_free(rec);
	gf_ring_free(ring);
	return got;
}

static long size_of(const char *p)
{
	struct stat st;
	CHECK(stat(p, &st) == 0);
	return (long)st.st_size;
}

static void case2(void)
{
	char *path = gf_test_path(dir, "rec.wav");
	char *a = record(path, 48000);
	CHECK(strcmp(a, path) == 0);
	long size_a = size_of(a);
	uint64_t hash_a = gf_test_file_hash(a);
	char *b = record(path, 4800); /* the restart: a shorter run */
	char *c = record(path, 4800);
	printf("case 2 (restart onto the same output.file): first %s keeps %ld bytes (now %ld); "
	       "restarts wrote %s and %s\n",
	       a, size_a, size_of(a), b, c);
	CHECK(size_of(a) == size_a && gf_test_file_hash(a) == hash_a);
	char *want_b = gf_test_path(dir, "rec.1.wav"), *want_c = gf_test_path(dir, "rec.2.wav");
	CHECK(strcmp(b, want_b) == 0 && strcmp(c, want_c) == 0);
	CHECK(size_of(b) > 4800 * CH * 4);
	struct stat st;
	CHECK(stat(a, &st) == 0);
	printf("case 3 (recording permissions): %o\n", (unsigned)(st.st_mode & 0777));
	CHECK((st.st_mode & 077) == 0);
	free(path);
	free(a);
	free(b);
	free(c);
	free(want_b);
	free(want_c);
}

static void case3_files(void)
{
	/* a symlink to a victim: not followed, victim unchanged */
	char *victim = gf_test_write_text_in(dir, "victim.txt", "precious\n");
	char *link = gf_test_path(dir, "link.wav");
	CHECK(symlink(victim, link) == 0);
	uint64_t h = gf_test_file_hash(victim);
	char *got = record(link, 480);
	printf("case 3 (output.file is a symlink): victim unchanged: %s; recorded to %s\n",
	       gf_test_file_hash(victim) == h ? "yes" : "NO", got);
	CHECK(gf_test_file_hash(victim) == h && strcmp(got, link) != 0);
	free(got);
	/* a FIFO: no hang, not opened */
	char *fifo = gf_test_path(dir, "fifo.wav");
	CHECK(mkfifo(fifo, 0600) == 0);
	got = record(fifo, 480);
	printf("case 3 (output.file is a FIFO): no hang; recorded to %s\n", got);
	CHECK(strcmp(got, fifo) != 0);
	free(got);
	free(fifo);
	free(victim);
	free(link);
}

static void expect_refused(const char *what, const char *name, const char *text)
{
	char *p = gf_test_write_text_in(dir, name, text);
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {""};
	int r = gf_config_load(p, &c, &eb);
	printf("case 3 (output.file is %s): %s -> %s\n", what, r ? "refused" : "ACCEPTED", eb.msg);
	CHECK(r == GF_E_CONFIG && strstr(eb.msg, "output.file") && strstr(eb.msg, "a file the config reads"));
	gf_config_free(c);
	free(p);
}

static void case3_config(void)
{
	char *taps = gf_test_write_text_in(dir, "taps.txt", "1.0\n0.5\n");
	char *inc = gf_test_write_text_in(dir, "inc.conf", "chain = [\"a\"];\n");
	expect_refused("the config itself", "self.conf",
		       "filters = ({name=\"a\"; coeffs=[1.0];});\nchain=[\"a\"];\n"
		       "output = { file = \"self.conf\"; };\n");
	expect_refused("a filter file", "filt.conf",
		       "filters = ({name=\"a\"; file=\"taps.txt\"; format=\"text\";});\nchain=[\"a\"];\n"
		       "output = { file = \"taps.txt\"; };\n");
	expect_refused("an @include (by another spelling)", "inc_out.conf",
		       "filters = ({name=\"a\"; coeffs=[1.0];});\n@include \"inc.conf\"\n"
		       "output = { file = \"./inc.conf\"; };\n");
	free(taps);
	free(inc);
}

#define FSIZE_LIMIT (256 * 1024) /* about 0.7 s of the recording */

struct limited {
	const char *path;
	int daemon_setup;
};

/* In a child: record 2 s under RLIMIT_FSIZE, with the daemon's set-up if asked. */
static void record_limited(void *arg)
{
	const char *path = ((const struct limited *)arg)->path;
	if (((const struct limited *)arg)->daemon_setup)
		gf_daemon_ignore_sigxfsz();
	struct rlimit rl = {FSIZE_LIMIT, FSIZE_LIMIT};
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	struct gf_ring *ring;
	struct gf_recorder *rec;
	struct gf_errbuf eb = {""};
	CHECK_OK(gf_ring_new(&ring, 8192, CH));
	CHECK_OK_EB(gf_recorder_new(&rec, path, RATE, ring, &eb), &eb);
	CHECK_OK_EB(gf_recorder_start(rec, &eb), &eb);
	float x[256 * CH] = {0};
	/* the audio side: it never waits for the disk, and its ring keeps being drained */
	for (uint32_t done = 0; done < 2 * RATE;) {
		if (gf_ring_write_space(ring) < 256) {
			gf_recorder_kick(rec);
			usleep(1000);
			continue;
		}
		CHECK(gf_ring_write(ring, x, 256) == 256);
		done += 256;
	}
	gf_recorder_stop(rec);
	printf("case 4 (child): all 2 s of audio passed; recorder errors %llu, %llu frames written, active "
	       "%d\n",
	       (unsigned long long)gf_recorder_errors(rec), (unsigned long long)gf_recorder_frames(rec),
	       gf_recorder_active(rec));
	CHECK(gf_recorder_errors(rec) >= 1 && !gf_recorder_active(rec));
	gf_recorder_free(rec);
	gf_ring_free(ring);
}

/* @return the child's wait status; its stderr in @p err */
static int run_limited(const char *path, int daemon_setup, char *err, size_t len)
{
	char *err_path = gf_test_path(dir, "rec-err.txt");
	struct limited arg = {path, daemon_setup};
	int st = gf_test_in_child(record_limited, &arg, err_path);
	gf_test_read_file(err_path, err, len);
	free(err_path);
	return st;
}

static void case4(void)
{
	char err[4096];
	char *dflt = gf_test_path(dir, "fsize-default.wav");
	int st = run_limited(dflt, 0, err, sizeof(err));
	printf("case 4 (RLIMIT_FSIZE %d KiB, default SIGXFSZ disposition): %s %d\n", FSIZE_LIMIT / 1024,
	       WIFSIGNALED(st) ? "killed by signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ);

	char *path = gf_test_path(dir, "fsize.wav");
	st = run_limited(path, 1, err, sizeof(err));
	printf("case 4 (RLIMIT_FSIZE %d KiB, the daemon's set-up): %s %d; %s", FSIZE_LIMIT / 1024,
	       WIFSIGNALED(st) ? "KILLED by signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), err);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(strstr(err, "fsize.wav stopped after") && strstr(err, "audio continues"));
	SF_INFO info = {0};
	SNDFILE *f = sf_open(path, SFM_READ, &info);
	CHECK(f);
	sf_close(f);
	printf("case 4 (the recording): %ld bytes, a valid file of %lld frames\n", size_of(path),
	       (long long)info.frames);
	CHECK(size_of(path) <= FSIZE_LIMIT && info.frames > 0);
	free(dflt);
	free(path);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	umask(022);
	dir = gf_test_tmpdir("hostile-record");
	case2();
	case3_files();
	case3_config();
	case4();
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
