/*
 * --plot and --export-filters against hostile targets, through the real
 * gpufir program run in a scratch folder. They write as offline mode does:
 * a temporary beside the target, renamed over it when complete. Each case
 * prints its result.
 *
 *   1  --plot -o a symlink to another file, a FIFO (it used to hang), a copy
 *      of /dev/full (as root: a failed write used to delete the node), and
 *      -i a FIFO: refused, the target as it was
 *   2  --plot -o its own config, a taps file the config reads, its -i input:
 *      refused, the file unchanged
 *   3  --plot over an existing SVG whose write fails (RLIMIT_FSIZE): the old
 *      file kept, no temporary left
 *   4  --export-filters: a failed export (RLIMIT_FSIZE) leaves the previous
 *      set exactly as it was; an export of 2 channels over one of 3 leaves
 *      no channel-2 file (the set is replaced whole); a DIR that is a
 *      symlink, holds a file an export does not write, or holds the
 *      export's own config: refused, nothing changed
 *   5  a config whose name holds newlines: the name stays inside comments
 *      of filters.conf and channel-N.txt (it used to inject a setting)
 *   6  SIGINT while an export is written: the program dies by it and
 *      leaves neither DIR nor its hidden temporary folder
 *   7  a mixer of 128 x 32 paths of 255 taps: --check-config reports per
 *      output and --plot draws at most 16 output sums, in seconds and under
 *      1 MB (per path they took about 40 s and 115 MB)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define LIMIT_NONE (-1)

/* Run gpufir (bounded: a hang is killed after 20 s) with an optional resource limit. @return 0 if it hung */
static int run_tool(const char *const args[], int res, rlim_t lim, struct run_result *r)
{
	pid_t pid = spawn_gpufir_limited(args, -1, res, lim, "t.out", "t.err");
	int st;
	int ended = wait_bounded(pid, 20.0, &st);
	r->exit_code = ended && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	gf_test_read_file("t.out", r->out, sizeof(r->out));
	gf_test_read_file("t.err", r->err, sizeof(r->err));
	unlink("t.out");
	unlink("t.err");
	return ended;
}

/* Every file in @p dir, names and bytes, as one number (0: no such folder). */
static uint64_t set_hash(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	uint64_t h = 1;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *p = gf_test_path(dir, e->d_name);
		uint64_t n = 1469598103934665603ull;
		for (const char *c = e->d_name; *c; c++)
			n = (n ^ (unsigned char)*c) * 1099511628211ull;
		h += n ^ gf_test_file_hash(p); /* a sum: readdir's order does not matter */
		free(p);
	}
	closedir(d);
	return h;
}

static void expect_refused(const char *what, const char *const args[], const char *target, const char *needle)
{
	struct stat before, after;
	CHECK(lstat(target, &before) == 0);
	uint64_t h = S_ISREG(before.st_mode) ? gf_test_file_hash(target) : 0;
	struct run_result r;
	int ended = run_tool(args, LIMIT_NONE, 0, &r);
	int kept = lstat(target, &after) == 0 && (after.st_mode & S_IFMT) == (before.st_mode & S_IFMT) &&
		   after.st_ino == before.st_ino && (!h || gf_test_file_hash(target) == h);
	printf("%s: %s %d, %s %s: %s", what, ended ? "exit" : "HUNG, killed;", r.exit_code, target,
	       kept ? "as it was" : "CHANGED", r.err);
	CHECK(ended && kept);
	CHECK_RUN(&r, GF_EXIT_IO, needle);
	CHECK(gpufir_temp_files(".") == 0);
}

static void case1(void)
{
	gf_test_write_text("victim.txt", "not a plot\n");
	uint64_t hv = gf_test_file_hash("victim.txt");
	CHECK(symlink("victim.txt", "link.svg") == 0);
	expect_refused("case 1 (--plot -o a symlink to another file)",
		       ARGS("--plot", "-c", "tiny.conf", "-o", "link.svg"), "link.svg", "is a symbolic link");
	CHECK(gf_test_file_hash("victim.txt") == hv);
	CHECK(mkfifo("plot.fifo", 0600) == 0);
	expect_refused("case 1 (--plot -o a FIFO)", ARGS("--plot", "-c", "tiny.conf", "-o", "plot.fifo"),
		       "plot.fifo", "is a FIFO");
	expect_refused("case 1 (--plot -i a FIFO)", ARGS("--plot", "-c", "tiny.conf", "-i", "plot.fifo"),
		       "plot.fifo", "is a FIFO");
	if (geteuid() != 0) {
		printf("case 1 (--plot -o a copy of /dev/full): skipped (needs root)\n");
		return;
	}
	CHECK(mknod("full", S_IFCHR | 0666, makedev(1, 7)) == 0);
	expect_refused("case 1 (--plot -o a copy of /dev/full)",
		       ARGS("--plot", "-c", "tiny.conf", "-o", "full"), "full", "is a character device");
}

static void case2(void)
{
	expect_refused("case 2 (--plot -o its own config)",
		       ARGS("--plot", "-c", "tiny.conf", "-o", "tiny.conf"), "tiny.conf",
		       "an input of this run");
	expect_refused("case 2 (--plot -o a taps file the config reads)",
		       ARGS("--plot", "-c", "file.conf", "-o", "./h.txt"), "h.txt", "an input of this run");
	expect_refused("case 2 (--plot -o its -i input)",
		       ARGS("--plot", "-c", "tiny.conf", "-i", "in.wav", "-o", "in.wav"), "in.wav",
		       "an input of this run");
}

static void case3(void)
{
	gf_test_write_text("old.svg", "<svg>the previous plot</svg>\n");
	uint64_t h = gf_test_file_hash("old.svg");
	struct run_result r;
	CHECK(run_tool(ARGS("--plot", "-c", "tiny.conf", "-o", "old.svg"), RLIMIT_FSIZE, 32768, &r));
	int kept = gf_test_exists("old.svg") && gf_test_file_hash("old.svg") == h;
	printf("case 3 (--plot over old.svg, the write fails at RLIMIT_FSIZE 32 KiB): exit %d, old.svg %s, "
	       "temporaries left: %d: %s",
	       r.exit_code, kept ? "kept" : "LOST", gpufir_temp_files("."), r.err);
	CHECK(kept && gpufir_temp_files(".") == 0);
	CHECK_RUN(&r, GF_EXIT_IO, "old.svg");
}

static void export_ok(const char *conf, const char *dir)
{
	struct run_result r;
	CHECK(run_tool(ARGS("--export-filters", dir, "-c", conf), LIMIT_NONE, 0, &r));
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
}

static void case4(void)
{
	export_ok("long.conf", "exp");
	uint64_t h = set_hash("exp");
	struct run_result r;
	CHECK(run_tool(ARGS("--export-filters", "exp", "-c", "long2.conf"), RLIMIT_FSIZE, 200000, &r));
	int kept = set_hash("exp") == h;
	printf("case 4 (--export-filters over a previous set, a write fails at RLIMIT_FSIZE 200 kB): "
	       "exit %d, the previous set %s, temporaries left: %d: %s",
	       r.exit_code, kept ? "as it was" : "CHANGED", gpufir_temp_files("."), r.err);
	CHECK(kept && gpufir_temp_files(".") == 0);
	CHECK_RUN(&r, GF_EXIT_IO, "write error");

	export_ok("three.conf", "exp3");
	export_ok("tiny.conf", "exp3");
	int stale = gf_test_exists("exp3/channel-2.wav") + gf_test_exists("exp3/channel-2.txt");
	printf("case 4 (2 channels exported over 3): channel-2 files left: %d\n", stale);
	CHECK(stale == 0 && gf_test_exists("exp3/channel-1.wav") && gpufir_temp_files(".") == 0);
	CHECK(run_tool(ARGS("--check-config", "exp3/filters.conf"), LIMIT_NONE, 0, &r));
	CHECK_RUN(&r, GF_EXIT_OK, NULL);

	CHECK(symlink("exp", "explink") == 0);
	expect_refused("case 4 (--export-filters into a symlink to a folder)",
		       ARGS("--export-filters", "explink", "-c", "tiny.conf"), "explink",
		       "is a symbolic link");
	CHECK(set_hash("exp") == h);
	CHECK(mkdir("mine", 0755) == 0);
	gf_test_write_text("mine/README", "my notes\n");
	expect_refused("case 4 (--export-filters into a folder with other files)",
		       ARGS("--export-filters", "mine", "-c", "tiny.conf"), "mine/README",
		       "which an export does not write");
	expect_refused("case 4 (--export-filters into the folder of its own config)",
		       ARGS("--export-filters", "exp/", "-c", "exp/filters.conf"), "exp/filters.conf",
		       "an input of this run");
	CHECK(set_hash("exp") == h);
}

static int only_in_comments(const char *path, const char *word)
{
	char text[65536];
	CHECK(gf_test_read_file(path, text, sizeof(text)) > 0);
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, word) && line[0] != '#')
			return 0;
	return 1;
}

static void case5(void)
{
	const char *evil = "cfg\ninjected = \"yes\";\n.conf";
	char body[4096];
	CHECK(gf_test_read_file("tiny.conf", body, sizeof(body)) > 0);
	gf_test_write_text(evil, body);
	export_ok(evil, "inj");
	int conf_ok = only_in_comments("inj/filters.conf", "injected");
	int txt_ok = only_in_comments("inj/channel-0.txt", "injected");
	struct run_result r;
	CHECK(run_tool(ARGS("--check-config", "inj/filters.conf"), LIMIT_NONE, 0, &r));
	printf("case 5 (a config named \"cfg\\ninjected = ...\"): filters.conf %s, channel-0.txt %s, "
	       "--check-config exit %d\n",
	       conf_ok ? "clean" : "INJECTED", txt_ok ? "clean" : "INJECTED", r.exit_code);
	CHECK(conf_ok && txt_ok);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
}

/* SIGINT while the set is written (2 channels of 2M taps: about 80 MB): nothing exported, nothing left. */
static void case6(void)
{
	pid_t pid = spawn_gpufir(ARGS("--export-filters", "big", "-c", "big.conf"), "b.out", "b.err");
	gpufir_wait_for_temp_file(".", pid);
	CHECK(kill(pid, SIGINT) == 0);
	int st;
	CHECK(wait_bounded(pid, 20.0, &st));
	unlink("b.out");
	unlink("b.err");
	printf("case 6 (SIGINT while --export-filters writes): %s %d, big/ %s, temporaries left: %d\n",
	       WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
	       gf_test_exists("big") ? "EXISTS" : "absent", gpufir_temp_files("."));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	CHECK(!gf_test_exists("big") && gpufir_temp_files(".") == 0);
}

/* A mixer of @p in x @p out paths of 255 taps, their gains spread so that outputs differ. */
static void write_mixer(const char *name, int in, int out)
{
	FILE *f = fopen(name, "w");
	CHECK(f);
	fprintf(f,
		"filters = ({ name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 255; });\n"
		"chain = [\"lp\"];\nmixer = { inputs = %d; outputs = %d; paths = (\n",
		in, out);
	for (int i = 0; i < in; i++)
		for (int o = 0; o < out; o++)
			fprintf(f, "%s{ in = %d; out = %d; gain_db = %.1f; }", i || o ? ",\n" : "", i, o,
				-40.0 - 0.1 * ((i * 7 + o * 13) % 97));
	fprintf(f, " ); };\n");
	CHECK(fclose(f) == 0);
}

/* Seconds @p args take (bounded at 20 s: a hang fails), with the result in @p r. */
static double timed(const char *const args[], struct run_result *r)
{
	uint64_t t0 = gf_now_ns();
	CHECK(run_tool(args, LIMIT_NONE, 0, r));
	return (double)(gf_now_ns() - t0) * 1e-9;
}

/* A mixer of 4096 paths: --check-config reports per output and --plot draws at most 16 sums, in
 * bounded time and size (they cost ~10 ms and 28 KB per path: 40 s and 115 MB). */
static void case7(void)
{
	write_mixer("mix.conf", 128, 32);
	struct run_result r;
	double t = timed(ARGS("--check-config", "-c", "mix.conf"), &r);
	int lines = 0;
	for (const char *p = r.out; (p = strchr(p, '\n')); p++)
		lines++;
	printf("case 7 (--check-config, a 128 x 32 mixer of 255-tap paths): exit %d in %.2f s, %d lines\n",
	       r.exit_code, t, lines);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(strstr(r.out, "mixer:        4096 paths into 32 outputs"));
	CHECK(strstr(r.out, "output 31:") && !strstr(r.out, "path 4095"));
	CHECK(lines < 32 + 32 + 16);
	CHECK(t < 10.0);
	t = timed(ARGS("--plot", "-c", "mix.conf", "-o", "mix.svg"), &r);
	struct stat st;
	CHECK(stat("mix.svg", &st) == 0);
	char head[4096] = "";
	gf_test_read_file("mix.svg", head, sizeof(head));
	printf("case 7 (--plot, the same mixer): exit %d in %.2f s, %lld bytes\n", r.exit_code, t,
	       (long long)st.st_size);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(st.st_size < 1000000);
	CHECK(strstr(head, "mixer of 4096 paths") && strstr(head, "the first 16 drawn"));
	CHECK(t < 10.0);
	/* An output that clips: the advice moves its paths' gains (an output has no gain_db). */
	gf_test_write_text("mix2.conf", "mixer = { inputs = 2; outputs = 3; paths = ( { in = 0; out = 0; },\n"
					"  { in = 1; out = 0; gain_db = 3.0; } ); };\n");
	CHECK(run_tool(ARGS("--check-config", "-c", "mix2.conf"), LIMIT_NONE, 0, &r));
	const char *w = strstr(r.out, "warning:      output 0 can clip");
	printf("case 7 (two paths into one output, one silent): %.*s\n", w ? (int)strcspn(w, "\n") : 0,
	       w ? w : "");
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(w && strstr(w, "its paths' gain_db lowered by 7.7 keeps") &&
	      strstr(r.out, "output 2:     no path"));
}

static void write_configs(void)
{
	const char *tiny = "filters = ({ name = \"g\"; coeffs = [0.5, 0.25]; });\nchain = [\"g\"];\n";
	gf_test_write_text("tiny.conf", tiny);
	gf_test_write_text("h.txt", "0.5\n0.25\n");
	gf_test_write_text("file.conf",
			   "filters = ({ name = \"f\"; file = \"h.txt\"; });\nchain = [\"f\"];\n");
	/* 30001 taps: a WAV of 120 kB, a text file of about 450 kB */
	const char *fmt = "filters = ({ name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; "
			  "taps = %s; gain_db = %s; });\nchain = [\"lp\"];\n";
	char text[512];
	snprintf(text, sizeof(text), fmt, "30001", "0.0");
	gf_test_write_text("long.conf", text);
	snprintf(text, sizeof(text), fmt, "30001", "-6.0");
	gf_test_write_text("long2.conf", text);
	snprintf(text, sizeof(text), fmt, "2000001", "0.0");
	gf_test_write_text("big.conf", text);
	gf_test_write_text("three.conf", "filters = ({ name = \"g\"; coeffs = [0.5]; });\nchain = [\"g\"];\n"
					 "routes = ({ channel = 2; chain = [\"g\"]; });\n");
	float x[4800] = {0};
	x[0] = 0.5f;
	gf_test_write_sound("in.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 1, 4800, x);
}

int main(void)
{
	gpufir_bin();
	char *dir = gf_test_tmpdir("hostile-tools");
	CHECK(chdir(dir) == 0);
	write_configs();
	case1();
	case2();
	case3();
	case4();
	case5();
	case6();
	case7();
	CHECK(chdir("/") == 0);
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
