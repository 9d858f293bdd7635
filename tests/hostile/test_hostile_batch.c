/*
 * Hostile batches, through the real gpufir program run in a scratch folder
 * (so the lists spell paths as a user would). Each case prints its result.
 *
 *   1  one file under two spellings: two outputs "out/x.wav" and
 *      "./out/x.wav" (and through a symlinked folder), an output that is
 *      another job's input ("a.wav<TAB>./b.wav", then "b.wav<TAB>out/bb.wav"),
 *      an output that is a hard link to an input: refused before anything
 *      runs (exit 2), no input changed
 *   2  lists: a NUL byte in a newline-separated list is refused naming the
 *      line (it used to cut the list short); -0/--null reads NUL-separated
 *      names (a newline and a leading '#' in a name); an endless line (under
 *      RLIMIT_AS where the build allows it) and a list that cannot be read
 *      fail with exit != 0 instead of ending the list
 *   3  the output folder renamed away and replaced while a file is written:
 *      on success, on SIGTERM and on SIGHUP no temporary is left in either
 *      folder (the finished file lands beside its temporary)
 *   4  --skip-existing with an empty output and one that is not a sound
 *      file: both filtered again; a complete output is skipped
 *   5  an endless list of names on standard input, under RLIMIT_AS and
 *      without: refused at 256 MiB of names (exit 2) instead of exit 5 when
 *      memory runs out, or gigabytes grown
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define FRAMES 96000

static uint64_t rng;

static void make_wav(const char *name)
{
	float *x = gf_test_noise(FRAMES, &rng);
	for (size_t i = 0; i < FRAMES; i++)
		x[i] *= 0.25f;
	gf_test_write_sound(name, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 1, FRAMES, x);
	free(x);
}

/* gpufir on the tiny config and the CPU, with @p extra arguments. */
#define BATCH(r, ...) run_gpufir(ARGS("-c", "tiny.conf", "--backend", "cpu", __VA_ARGS__), (r))

static void expect_refused(const char *what, const char *list, const char *needle, const char *unchanged,
			   const char *not_written)
{
	uint64_t h = gf_test_file_hash(unchanged);
	struct run_result r;
	BATCH(&r, "--batch", list);
	int kept = gf_test_file_hash(unchanged) == h;
	printf("case 1 (%s): exit %d, %s %s: %s", what, r.exit_code, unchanged,
	       kept ? "unchanged" : "CHANGED", r.err);
	CHECK_RUN(&r, GF_EXIT_USAGE, needle);
	CHECK(kept && !gf_test_exists(not_written));
}

static void case1(void)
{
	static const struct {
		const char *what, *list, *text, *needle, *unchanged, *not_written;
	} cases[] = {
		{"out/x.wav and ./out/x.wav", "twice.list", "a.wav\tout/x.wav\nb.wav\t./out/x.wav\n",
		 "would be written twice", "a.wav", "out/x.wav"},
		{"out/x.wav and outlink/x.wav, outlink -> out", "link.list",
		 "a.wav\tout/x.wav\nb.wav\toutlink/x.wav\n", "would be written twice", "a.wav", "out/x.wav"},
		{"a.wav<TAB>./b.wav, then b.wav<TAB>out/bb.wav", "input.list",
		 "a.wav\t./b.wav\nb.wav\tout/bb.wav\n", "is the input", "b.wav", "out/bb.wav"},
		{"an output that is a hard link to another job's input", "hard.list",
		 "a.wav\thard.wav\nb.wav\tout/c.wav\n", "same file", "b.wav", "out/c.wav"},
	};
	CHECK(symlink("out", "outlink") == 0);
	CHECK(link("b.wav", "hard.wav") == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gf_test_write_text(cases[i].list, cases[i].text);
		expect_refused(cases[i].what, cases[i].list, cases[i].needle, cases[i].unchanged,
			       cases[i].not_written);
	}
	CHECK(gpufir_temp_files(".") == 0 && gpufir_temp_files("out") == 0);
}

static void case2_nul(void)
{
	/* find -print0's list without -0: it used to end at the first NUL, b.wav silently lost */
	static const char text[] = "# two jobs\na.wav\0b.wav\0";
	gf_test_write_file("nul.list", text, sizeof(text) - 1);
	struct run_result r;
	BATCH(&r, "--batch", "nul.list", "-o", "outn/");
	printf("case 2 (NUL-separated names in a newline list, no -0): exit %d: %s", r.exit_code, r.err);
	CHECK_RUN(&r, GF_EXIT_USAGE, "nul.list:2: a NUL byte");
	CHECK(!gf_test_exists("outn/a.wav") && !gf_test_exists("outn/b.wav"));

	/* -0: names as they are, a newline and a leading '#' included */
	make_wav("we ird\nname.wav");
	make_wav("#hash.wav");
	static const char zero[] = "we ird\nname.wav\0#hash.wav\0a.wav\tout/z.wav\0";
	gf_test_write_file("zero.list", zero, sizeof(zero) - 1);
	BATCH(&r, "--batch", "zero.list", "-0", "-o", "out0/");
	printf("case 2 (-0 list: a newline and a leading '#' in names, a TAB pair): exit %d\n", r.exit_code);
	CHECK_RUN(&r, GF_EXIT_OK, "3 written");
	CHECK(gf_test_exists("out0/we ird\nname.wav") && gf_test_exists("out0/#hash.wav") &&
	      gf_test_exists("out/z.wav"));
}

/* A RLIMIT_AS under which gpufir --version runs (0: none, a sanitizer build). */
static rlim_t usable_as_limit(void)
{
	const rlim_t lim = (rlim_t)768 << 20;
	pid_t pid = spawn_gpufir_limited(ARGS("--version"), -1, RLIMIT_AS, lim, "v.out", "v.err");
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	unlink("v.out");
	unlink("v.err");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? lim : 0;
}

/* A batch reading standard input fed with @p chunk (@p len bytes) over and over, up to @p most bytes
 * or until gpufir closes the pipe, under RLIMIT_AS @p lim (0: none). @return the bytes sent. */
static size_t feed_batch(const char *chunk, size_t len, size_t most, rlim_t lim, struct run_result *r)
{
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = spawn_gpufir_limited(ARGS("-c", "tiny.conf", "--batch", "-", "-o", "out/"), p[0],
					 lim ? RLIMIT_AS : -1, lim, "e.out", "e.err");
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	size_t sent = 0;
	while (sent < most) {
		ssize_t n = write(p[1], chunk, len);
		if (n <= 0)
			break;
		sent += (size_t)n;
	}
	close(p[1]);
	signal(SIGPIPE, SIG_DFL);
	wait_gpufir(pid, "e.out", "e.err", r);
	return sent;
}

/* An endless line on standard input: a writer that stops when gpufir closes the pipe. */
static void case2_endless(void)
{
	rlim_t lim = usable_as_limit();
	static char chunk[1 << 16];
	memset(chunk, 'x', sizeof(chunk));
	struct run_result r;
	/* without a limit: 4 MiB */
	size_t sent = feed_batch(chunk, sizeof(chunk), lim ? (size_t)2 << 30 : (size_t)4 << 20, lim, &r);
	printf("case 2 (an endless line on standard input, %s, %zu MiB sent): exit %d: %s",
	       lim ? "RLIMIT_AS 768 MiB" : "no RLIMIT_AS (sanitizer build)", sent >> 20, r.exit_code, r.err);
	CHECK(r.exit_code != GF_EXIT_OK && r.exit_code > 0);
	CHECK_RUN(&r, GF_EXIT_USAGE, "standard input:1: longer than 64 KiB");

	CHECK(mkdir("list.d", 0755) == 0);
	BATCH(&r, "--batch", "list.d", "-o", "out/");
	printf("case 2 (a list that cannot be read: a folder): exit %d: %s", r.exit_code, r.err);
	CHECK_RUN(&r, GF_EXIT_IO, "cannot read the batch list list.d");
}

/* An endless list of short lines ("a.wav" forever) on standard input, under @p lim (0: none). */
static void endless_list(rlim_t lim)
{
	static char chunk[6 * 10000];
	for (size_t i = 0; i < sizeof(chunk); i += 6)
		memcpy(chunk + i, "a.wav\n", 6);
	struct run_result r;
	/* 1 GiB: 180 million jobs, beyond any bound */
	size_t sent = feed_batch(chunk, sizeof(chunk), (size_t)1 << 30, lim, &r);
	printf("case 5 (an endless list of names on standard input, %s, %zu MiB sent): exit %d: %s",
	       lim ? "RLIMIT_AS 768 MiB" : "no RLIMIT_AS", sent >> 20, r.exit_code, r.err);
	CHECK_RUN(&r, GF_EXIT_USAGE, "the list holds more than 256 MiB of names");
}

/* The list is bounded: refused (exit 2) when it holds too much, never exit 5 out of memory nor
 * gigabytes grown (it grew to 3 GB in 10 s). */
static void case5(void)
{
	rlim_t lim = usable_as_limit();
	if (lim)
		endless_list(lim);
	endless_list(0);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Start a batch whose one job reads a FIFO fed with a.wav's first bytes, so it
 * sits mid-file with its temporary open in out/. @return its pid */
static pid_t start_blocked(int *wfd, const unsigned char *wav, size_t head)
{
	pid_t pid = spawn_gpufir(
		ARGS("-q", "-c", "tiny.conf", "--backend", "cpu", "--batch", "fifo.list", "-j", "1"), "s.out",
		"s.err");
	*wfd = open("in.fifo", O_WRONLY);
	CHECK(*wfd >= 0);
	CHECK(write(*wfd, wav, head) == (ssize_t)head);
	gpufir_wait_for_temp_file("out", pid);
	sleep_ms(50);
	return pid;
}

/* The folder swap: out/ becomes out.old/, a new out/ takes its name. */
static void swap_out(void)
{
	CHECK(rename("out", "out.old") == 0);
	CHECK(mkdir("out", 0755) == 0);
}

static void reset_out(void)
{
	CHECK(system("rm -rf out out.old") == 0);
	CHECK(mkdir("out", 0755) == 0);
}

static void case3(void)
{
	CHECK(mkfifo("in.fifo", 0600) == 0);
	gf_test_write_text("fifo.list", "in.fifo\tout/x.wav\n");
	static unsigned char wav[FRAMES * 4 + 4096];
	long size = gf_test_read_file("a.wav", (char *)wav, sizeof(wav));
	CHECK(size > 65536);
	const size_t head = 65536;
	static const char *const how[] = {"finished", "SIGTERM", "SIGHUP"};
	for (int k = 0; k < 3; k++) {
		reset_out();
		int wfd, st;
		pid_t pid = start_blocked(&wfd, wav, head);
		swap_out();
		if (k == 0)
			CHECK(write(wfd, wav + head, (size_t)size - head) == (ssize_t)(size - (long)head));
		else
			CHECK(kill(pid, k == 1 ? SIGTERM : SIGHUP) == 0);
		sleep_ms(100);
		close(wfd);
		CHECK(waitpid(pid, &st, 0) == pid);
		int left = gpufir_temp_files("out") + gpufir_temp_files("out.old");
		printf("case 3 (out/ renamed to out.old/ and replaced mid-file, then %s): %s %d, "
		       "temporaries left: %d, out.old/x.wav %s\n",
		       how[k], WIFEXITED(st) ? "exit" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), left,
		       gf_test_exists("out.old/x.wav") ? "written" : "absent");
		CHECK(left == 0 && !gf_test_exists("out/x.wav"));
		if (k == 0)
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && gf_test_exists("out.old/x.wav"));
		else if (k == 1)
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == GF_EXIT_INTERRUPTED);
		else
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGHUP);
	}
	unlink("in.fifo");
	unlink("s.out");
	unlink("s.err");
	reset_out();
}

/* The frames of a sound file, or -1 when it is not one. */
static long frames_of(const char *path)
{
	SF_INFO info = {0};
	SNDFILE *f = sf_open(path, SFM_READ, &info);
	if (!f)
		return -1;
	sf_close(f);
	return (long)info.frames;
}

static void case4(void)
{
	CHECK(mkdir("skip", 0755) == 0);
	gf_test_write_file("skip/y.wav", "", 0);
	gf_test_write_text("skip/z.wav", "not a sound file\n");
	struct run_result r;
	BATCH(&r, "-i", "a.wav", "-o", "skip/w.wav");
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	uint64_t done = gf_test_file_hash("skip/w.wav");
	gf_test_write_text("skip.list", "a.wav\tskip/y.wav\nb.wav\tskip/z.wav\na.wav\tskip/w.wav\n");
	BATCH(&r, "--batch", "skip.list", "--skip-existing");
	long fy = frames_of("skip/y.wav"), fz = frames_of("skip/z.wav");
	printf("case 4 (--skip-existing: a 0-byte output, a text file, a complete one): exit %d, "
	       "frames now %ld and %ld: %s",
	       r.exit_code, fy, fz, r.err);
	CHECK_RUN(&r, GF_EXIT_OK, "2 written, 0 failed, 1 skipped");
	CHECK(strstr(r.err, "skip/y.wav exists but is empty") && strstr(r.err, "not a readable sound file"));
	CHECK(fy == FRAMES && fz == FRAMES && gf_test_file_hash("skip/w.wav") == done);
}

int main(void)
{
	gpufir_bin();
	char *dir = gf_test_tmpdir("hostile-batch");
	CHECK(chdir(dir) == 0);
	rng = gf_test_seed("test_hostile_batch");
	make_wav("a.wav");
	make_wav("b.wav");
	gf_test_write_text("tiny.conf", "filters = ({ name = \"g\"; coeffs = [0.5, 0.25]; });\n"
					"chain = [\"g\"];\n");
	CHECK(mkdir("out", 0755) == 0);
	case1();
	case2_nul();
	case2_endless();
	case3();
	case4();
	case5();
	CHECK(chdir("/") == 0);
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
