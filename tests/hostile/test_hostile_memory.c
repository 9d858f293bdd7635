/*
 * Memory limits (issue "hostile input and a local attacker", case 8: the
 * locked-memory and address-space parts; the host estimate and the capped
 * reads are in test_hostile_config). Each case prints its result.
 *
 *  8  a huge inline `coeffs` array under RLIMIT_AS (`ulimit -v`): the real
 *     gpufir refuses it before libconfig parses, with how much it needs and
 *     how much it may use (libconfig 1.5 segfaulted: rc 139)
 *  8  the stream's buffers against the locked-memory budget (RLIMIT_MEMLOCK,
 *     as a user without CAP_IPC_LOCK): over it, a warning with both figures
 *     while nothing forces locking; refused with both figures once all memory
 *     is locked (mlockall); a build under mlockall is checked against the
 *     same budget
 *  17  FFTW aborts the process when its own allocation fails (its planner
 *     calls abort()), though the config's memory estimate let the filter
 *     through: a minimum-phase design (an FFT of 2^22 points) under a sweep
 *     of RLIMIT_AS limits 12 MiB apart, through --check-config, an offline run and the
 *     daemon's reload path (gf_reload_job_run, in a child): at every limit
 *     the build either succeeds or fails with a message and an exit code,
 *     never SIGABRT, and a failed reload keeps the running filter
 */
#define _GNU_SOURCE
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "error.h"
#include "live_internal.h"
#include "memlimit.h"
#include "reload.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define MIB (1024ull * 1024ull)
#define HUGE_VALUES 6000000 /* about 24 MB of text; libconfig takes about 90 bytes a value */

static char *dir;

/* gpufir ARGS with RLIMIT_AS = @p as_bytes; @return its wait status, its stderr in @p err. */
static int run_args_limited(const char *const args[], uint64_t as_bytes, char *err, size_t len)
{
	char *err_path = gf_test_path(dir, "err.txt");
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_AS, &rl) != 0)
			_exit(120);
		rl.rlim_cur = (rlim_t)as_bytes;
		if (setrlimit(RLIMIT_AS, &rl) != 0 || !freopen(err_path, "w", stderr) ||
		    !freopen("/dev/null", "w", stdout))
			_exit(121);
		const char *argv[16] = {"gpufir"};
		for (int i = 0; args[i] && i < 14; i++)
			argv[i + 1] = args[i];
		execv(gpufir_bin(), (char *const *)argv);
		_exit(127);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	gf_test_read_file(err_path, err, len);
	free(err_path);
	return st;
}

/* gpufir --check-config -c @p conf with RLIMIT_AS = @p as_bytes. */
static int run_limited(const char *conf, uint64_t as_bytes, char *err, size_t len)
{
	return run_args_limited(ARGS("--check-config", "-c", conf), as_bytes, err, len);
}

static int exited(int st, int code)
{
	return WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/* The least RLIMIT_AS (within 64 MiB) under which gpufir ARGS succeeds; 0 if not even 8 GiB. */
static uint64_t base_limit_args(const char *const args[])
{
	char err[4096];
	uint64_t lo = 64 * MIB, hi = 8192 * MIB;
	if (!exited(run_args_limited(args, hi, err, sizeof(err)), 0))
		return 0; /* a sanitizer build reserves terabytes of address space */
	while (hi - lo > 64 * MIB) {
		uint64_t mid = (lo + hi) / 2;
		if (exited(run_args_limited(args, mid, err, sizeof(err)), 0))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The least RLIMIT_AS under which gpufir checks a tiny config. */
static uint64_t base_limit(const char *tiny)
{
	return base_limit_args(ARGS("--check-config", "-c", tiny));
}

static void case8_address_space(void)
{
	char *tiny = gf_test_write_text_in(
		dir, "tiny.conf",
		"sample_rate = 48000;\nfilters = ({ name = \"a\"; coeffs = [0.5, 0.25]; });\n"
		"chain = [\"a\"];\n");
	char *huge = gf_test_path(dir, "huge.conf");
	FILE *f = fopen(huge, "w");
	CHECK(f);
	fputs("sample_rate = 48000;\nfilters = ({ name = \"a\"; coeffs = [", f);
	for (int i = 0; i < HUGE_VALUES; i++)
		fputs(i ? ",0.5" : "0.5", f);
	fputs("]; });\nchain = [\"a\"];\n", f);
	CHECK(fclose(f) == 0);
	uint64_t base = base_limit(tiny);
	if (!base) {
		printf("case 8 (huge inline coeffs under ulimit -v): skipped (gpufir does not run under an "
		       "8 GiB address-space limit here: a sanitizer build?)\n");
		free(tiny);
		free(huge);
		return;
	}
	uint64_t lim = base + 128 * MIB;
	char err[16384];
	int st = run_limited(huge, lim, err, sizeof(err));
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	printf("case 8 (%d inline coeffs under ulimit -v %llu MiB, %llu MiB above what a tiny config "
	       "needs): %s%d: %s",
	       HUGE_VALUES, (unsigned long long)(lim / MIB), (unsigned long long)((lim - base) / MIB),
	       sig ? "KILLED by signal " : "exit ", sig ? sig : WEXITSTATUS(st), err);
	CHECK(!sig && exited(st, GF_EXIT_FAILURE));
	CHECK(strstr(err, "values") && strstr(err, "needs about") && strstr(err, "may still use") &&
	      strstr(err, "ulimit -v"));
	free(tiny);
	free(huge);
}

/* As a user without CAP_IPC_LOCK (nobody, when run as root), RLIMIT_MEMLOCK 1 MiB. */
static void become_limited_user(void)
{
	if (geteuid() == 0) {
		CHECK(setgroups(0, NULL) == 0);
		CHECK(setresgid(65534, 65534, 65534) == 0);
		CHECK(setresuid(65534, 65534, 65534) == 0);
	}
	struct rlimit rl = {MIB, MIB};
	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
}

/* In a child (it gives up root and marks all memory locked); @p arg: its stderr's file. */
static void locked_cases(void *arg)
{
	const char *err_path = arg;
	become_limited_user();
	struct gf_errbuf eb = {""};
	struct gf_live *l = NULL;
	/* 64 channels, block 8192: rings of about 48 MiB, over the 1 MiB budget. */
	int r = gf_live_new_detached(&l, 48000, 64, 8192, 1, NULL, NULL, &eb);
	gf_live_free(l);
	char warned[4096] = "";
	fflush(stderr);
	gf_test_read_file(err_path, warned, sizeof(warned));
	printf("case 8 (stream buffers of 64 ch x block 8192 over RLIMIT_MEMLOCK 1 MiB, memory not "
	       "all locked): %s; warning: %s",
	       r ? "REFUSED" : "started", warned[0] ? warned : "NONE\n");
	CHECK(r == 0 && strstr(warned, "MiB of locked memory") && strstr(warned, "RLIMIT_MEMLOCK"));

	gf_mem_note_all_locked(); /* what a successful mlockall(MCL_FUTURE) records (rt.c) */
	l = NULL;
	eb.msg[0] = '\0';
	r = gf_live_new_detached(&l, 48000, 64, 8192, 1, NULL, NULL, &eb);
	gf_live_free(l);
	printf("case 8 (the same under mlockall): %s: %s\n", r ? "refused" : "STARTED", eb.msg);
	CHECK(r == GF_E_NOMEM && strstr(eb.msg, "need") && strstr(eb.msg, "MiB of locked memory") &&
	      strstr(eb.msg, "available"));

	struct gf_config *c = NULL;
	struct gf_filter_set *fs = NULL;
	eb.msg[0] = '\0';
	CHECK_OK_EB(gf_config_load_string("sample_rate = 48000;\nfilters = ({ name = \"a\"; design = "
					  "\"lowpass\"; cutoff_hz = 1000.0; taps = 262143; });\n"
					  "chain = [\"a\"];\n",
					  NULL, &c, &eb),
		    &eb);
	r = gf_config_build(c, 48000, 2, &fs, &eb);
	printf("case 8 (a 262143-tap build under mlockall, 1 MiB locked budget): %s: %s\n",
	       r ? "refused" : "BUILT", eb.msg);
	CHECK(r == GF_E_NOMEM && !fs && strstr(eb.msg, "locked memory") && strstr(eb.msg, "RLIMIT_MEMLOCK"));
	gf_filter_set_free(fs);
	gf_config_free(c);
}

static void case8_locked(void)
{
	char *err_path = gf_test_path(dir, "locked-err.txt");
	int st = gf_test_in_child(locked_cases, err_path, err_path);
	if (!exited(st, 0)) {
		char err[4096] = "";
		gf_test_read_file(err_path, err, sizeof(err));
		fprintf(stderr, "the locked-memory cases failed:\n%s", err);
	}
	CHECK(exited(st, 0));
	free(err_path);
}

/* ---- case 17: FFTW's own allocations -------------------------------------- */

/* 16383 taps to minimum phase: an FFT of 2^22 points (64 MiB of arrays, FFTW's plans about 68 MiB). */
#define MP_FILTERS                                                                                           \
	"filters = ({ name = \"a\"; design = \"lowpass\"; cutoff_hz = 1000.0; taps = 16383; "                \
	"phase = \"minimum\"; });\nchain = [\"a\"];\n"
#define SWEEP_STEP (12 * MIB)
#define SWEEP_STEPS 20

/* One limit: gpufir succeeded or failed with a message, never by a signal. @return 1 if it succeeded. */
static int sweep_step(const char *what, const char *const args[], uint64_t base, uint64_t add)
{
	char err[16384];
	int st = run_args_limited(args, base + add, err, sizeof(err));
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	const char *msg = strstr(err, "error: ");
	int n = msg ? (int)strcspn(msg, "\n") : 0;
	printf("case 17 (%s, ulimit -v %llu MiB + %llu MiB): %s%d %.*s\n", what,
	       (unsigned long long)(base / MIB), (unsigned long long)(add / MIB),
	       sig ? "KILLED by signal " : "exit ", sig ? sig : WEXITSTATUS(st), n, msg ? msg : "");
	CHECK(!sig && (exited(st, 0) || msg));
	return exited(st, 0);
}

/* gpufir ARGS from the least limit a tiny run needs (@p tiny) upwards: the sweep crosses the build's need. */
static void sweep(const char *what, const char *const args[], const char *const tiny[])
{
	uint64_t base = base_limit_args(tiny);
	if (!base) {
		printf("case 17 (%s): skipped (no run under an 8 GiB address-space limit: a sanitizer "
		       "build?)\n",
		       what);
		return;
	}
	int ok = 0;
	for (int k = 0; k <= SWEEP_STEPS; k++)
		ok += sweep_step(what, args, base, (uint64_t)k * SWEEP_STEP);
	printf("case 17 (%s): %d of %d limits built, the others refused with a message\n", what, ok,
	       SWEEP_STEPS + 1);
	CHECK(ok > 0 && ok <= SWEEP_STEPS);
}

static void case17_programs(void)
{
	char *tiny = gf_test_write_text_in(dir, "tiny17.conf",
					   "filters = ({ name = \"a\"; coeffs = [0.5]; });\n"
					   "chain = [\"a\"];\n");
	char *mp = gf_test_write_text_in(dir, "mp17.conf", MP_FILTERS);
	char *in = gf_test_path(dir, "in17.wav"), *out = gf_test_path(dir, "out17.wav");
	float x[4800 * 2] = {0};
	x[0] = 1.0f;
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, 4800, x);
	sweep("--check-config", ARGS("--check-config", "-c", mp), ARGS("--check-config", "-c", tiny));
	sweep("offline run", ARGS("-q", "-i", in, "-o", out, "-c", mp),
	      ARGS("-q", "-i", in, "-o", out, "-c", tiny));
	free(tiny);
	free(mp);
	free(in);
	free(out);
}

static uint64_t address_space_used(void)
{
	uint64_t pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	CHECK(f && fscanf(f, "%" SCNu64, &pages) == 1);
	fclose(f);
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The daemon's reload path under a limit: the job succeeds or fails with its text; the running engine keeps
 * its 2-tap filter (nothing is swapped here). @return 1 if it built. */
static int reload_step(struct gf_config_source *src, const struct gf_config *running, struct gf_engine *e,
		       uint64_t used, uint64_t add)
{
	struct rlimit rl;
	CHECK(getrlimit(RLIMIT_AS, &rl) == 0);
	rl.rlim_cur = (rlim_t)(used + add);
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	struct gf_reload_job j;
	gf_reload_job_init(&j, src, running, 1, 0);
	int err = gf_reload_job_run(&j);
	rl.rlim_cur = RLIM_INFINITY;
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	printf("case 17 (daemon reload, ulimit -v in use + %llu MiB): %s\n", (unsigned long long)(add / MIB),
	       err ? j.r.text : "built");
	CHECK(!err || (j.r.outcome == GF_RELOAD_FAILED && strncmp(j.r.text, "reload failed: ", 15) == 0));
	CHECK(!err || strstr(j.r.text, "mp17d.conf"));
	gf_reload_job_clear(&j);
	CHECK(gf_engine_taps(e) == 2 && !gf_engine_swap_pending(e));
	return !err;
}

/* In a child: start up on a 2-tap filter, then reload the minimum-phase config under rising limits. */
static void reload_child(void *unused)
{
	(void)unused;
	char *conf = gf_test_write_text_in(
		dir, "mp17d.conf",
		"backend = \"cpu\";\nfilters = ({ name = \"a\"; coeffs = [0.5, 0.25]; });\n"
		"chain = [\"a\"];\n");
	struct gf_config_source src = {.path = conf};
	struct gf_reload_job j;
	gf_reload_job_init(&j, &src, NULL, 0, 0);
	CHECK_OK(gf_reload_job_run(&j));
	struct gf_engine *e = j.engine;
	struct gf_config *cfg = j.cfg;
	j.engine = NULL;
	j.cfg = NULL;
	gf_reload_job_clear(&j);
	gf_test_write_text(conf, "backend = \"cpu\";\n" MP_FILTERS);
	uint64_t used = address_space_used();
	int ok = 0;
	for (int k = 0; k <= SWEEP_STEPS; k++)
		ok += reload_step(&src, cfg, e, used, (uint64_t)k * SWEEP_STEP);
	printf("case 17 (daemon reload): %d of %d limits built, the others failed with a message; the "
	       "running filter stayed\n",
	       ok, SWEEP_STEPS + 1);
	CHECK(ok > 0 && ok <= SWEEP_STEPS);
	gf_engine_free(e);
	gf_config_free(cfg);
	free(conf);
}

static void case17_reload(void)
{
	if (!base_limit_args(ARGS("--version"))) {
		printf("case 17 (daemon reload): skipped (a sanitizer build?)\n");
		return;
	}
	int st = gf_test_in_child(reload_child, NULL, NULL);
	if (WIFSIGNALED(st))
		printf("case 17 (daemon reload): KILLED by signal %d\n", WTERMSIG(st));
	CHECK(exited(st, 0));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = gf_test_tmpdir("hostile-memory");
	CHECK(chmod(dir, 0777) == 0); /* the child that gave up root writes here */
	case8_locked();
	case8_address_space();
	case17_programs();
	case17_reload();
	gf_test_rmtree(dir);
	free(dir);
	printf("ok\n");
	return 0;
}
