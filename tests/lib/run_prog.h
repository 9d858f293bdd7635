/**
 * @file run_prog.h
 * Run the real gpufir program from a test (posix_spawn), capturing its
 * stdout and stderr in files, and check how it ended. Header-only: included
 * by the tests that exercise the command line (test_cli, test_offline*).
 */
#ifndef GPUFIR_TEST_RUN_PROG_H
#define GPUFIR_TEST_RUN_PROG_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

extern char **environ;

/** A NULL-terminated argument list, for run_gpufir and spawn_gpufir. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

struct run_result {
	int exit_code; /* -1 when killed by a signal */
	char out[16384];
	char err[16384];
};

/** $GPUFIR_BIN, or skip the test when the program was not built. */
static inline const char *gpufir_bin(void)
{
	const char *bin = getenv("GPUFIR_BIN");
	if (!bin || access(bin, X_OK) != 0)
		gf_test_skip("GPUFIR_BIN is not set to the gpufir program");
	return bin;
}

/** gpufir's argv: the program, then @p args (NULL-terminated), into @p argv of 64. */
static inline void gpufir_argv(const char *const args[], const char *argv[64])
{
	size_t n = 0;
	argv[n++] = gpufir_bin();
	for (size_t i = 0; args[i]; i++) {
		CHECK(n < 63);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
}

/**
 * Start gpufir with @p args (NULL-terminated, without argv[0]); stdout and
 * stderr go to @p out_path and @p err_path. @return its pid
 */
static inline pid_t spawn_gpufir(const char *const args[], const char *out_path, const char *err_path)
{
	const char *argv[64];
	gpufir_argv(args, argv);
	posix_spawn_file_actions_t fa;
	CHECK(posix_spawn_file_actions_init(&fa) == 0);
	CHECK(posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) == 0);
	CHECK(posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0);
	CHECK(posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	CHECK(rc == 0);
	return pid;
}

/**
 * Wait for @p pid; fill @p r from its exit status and captured output, and
 * @p ru (if not NULL) with the resources it used.
 */
static inline void wait_gpufir_usage(pid_t pid, const char *out_path, const char *err_path,
				     struct run_result *r, struct rusage *ru)
{
	int status;
	CHECK(wait4(pid, &status, 0, ru) == pid);
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	gf_test_read_file(out_path, r->out, sizeof(r->out));
	gf_test_read_file(err_path, r->err, sizeof(r->err));
	unlink(out_path);
	unlink(err_path);
}

/** Wait for @p pid; fill @p r from its exit status and captured output. */
static inline void wait_gpufir(pid_t pid, const char *out_path, const char *err_path, struct run_result *r)
{
	wait_gpufir_usage(pid, out_path, err_path, r, NULL);
}

/**
 * spawn_gpufir with standard input from @p stdin_fd (-1: /dev/null) and, when
 * @p resource >= 0, that resource limit lowered to @p limit (RLIMIT_AS,
 * RLIMIT_FSIZE); SIGXFSZ is ignored, so a write over RLIMIT_FSIZE fails with
 * EFBIG instead of killing the program. @return its pid
 */
static inline pid_t spawn_gpufir_limited(const char *const args[], int stdin_fd, int resource, rlim_t limit,
					 const char *out_path, const char *err_path)
{
	const char *argv[64];
	gpufir_argv(args, argv);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct rlimit rl;
		if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(121);
		if (resource >= 0) {
			if (getrlimit(resource, &rl) != 0)
				_exit(122);
			rl.rlim_cur = limit;
			if (setrlimit(resource, &rl) != 0)
				_exit(122);
		}
		signal(SIGXFSZ, SIG_IGN);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/**
 * Wait up to @p seconds for @p pid; past that, kill it (SIGKILL) and reap it.
 * @return 1 when it ended by itself, 0 when it had to be killed (it hung)
 */
static inline int wait_bounded(pid_t pid, double seconds, int *status)
{
	for (double t = 0.0; t < seconds; t += 0.01) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, status, 0) == pid);
	return 0;
}

/** Run gpufir to completion. Output files live in $TMPDIR (or /tmp). */
static inline void run_gpufir(const char *const args[], struct run_result *r)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char out_path[4096], err_path[4096];
	snprintf(out_path, sizeof(out_path), "%s/gpufir-run-%d.out", tmp, (int)getpid());
	snprintf(err_path, sizeof(err_path), "%s/gpufir-run-%d.err", tmp, (int)getpid());
	pid_t pid = spawn_gpufir(args, out_path, err_path);
	wait_gpufir(pid, out_path, err_path, r);
}

/** Fail (printing the command's output) unless it exited with @p code and stderr holds @p needle. */
static inline void check_run(const struct run_result *r, int code, const char *needle, const char *file,
			     int line)
{
	if (r->exit_code == code && (!needle || strstr(r->err, needle)))
		return;
	fprintf(stderr,
		"%s:%d: expected exit %d and \"%s\" on stderr; got exit %d\n"
		"--- stdout:\n%s--- stderr:\n%s---\n",
		file, line, code, needle ? needle : "", r->exit_code, r->out, r->err);
	exit(1);
}

#define CHECK_RUN(r, code, needle) check_run((r), (code), (needle), __FILE__, __LINE__)

/** Temporary outputs (".NAME.gpufir-XXXXXX") left in @p dir. */
static inline int gpufir_temp_files(const char *dir)
{
	DIR *dh = opendir(dir);
	CHECK(dh);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dh)))
		n += strstr(e->d_name, ".gpufir-") != NULL;
	closedir(dh);
	return n;
}

/**
 * Wait until gpufir (@p pid) has a temporary output in @p dir, i.e. it is
 * filtering; up to 20 s (slow sanitizer builds). Fails the test if it ends first.
 */
static inline void gpufir_wait_for_temp_file(const char *dir, pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		if (gpufir_temp_files(dir) > 0)
			return;
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "gpufir ended (status 0x%x) before it started writing\n", status);
			exit(1);
		}
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "no temporary output appeared\n");
	exit(1);
}

/**
 * Run gpufir and expect it to fail: exit @p code with @p needle on stderr,
 * no @p out created (when given), no temporary output left in @p dir, and
 * @p in (when given and present) unchanged.
 */
static inline void expect_failure_at(const char *dir, const char *in, const char *const args[],
				     const char *out, int code, const char *needle, const char *file,
				     int line)
{
	uint64_t h0 = in && gf_test_exists(in) ? gf_test_file_hash(in) : 0;
	struct run_result r;
	run_gpufir(args, &r);
	check_run(&r, code, needle, file, line);
	if (out && gf_test_exists(out)) {
		fprintf(stderr, "%s:%d: %s exists after a failed run\n", file, line, out);
		exit(1);
	}
	CHECK(gpufir_temp_files(dir) == 0);
	CHECK(!in || !gf_test_exists(in) || gf_test_file_hash(in) == h0);
}

#define EXPECT_FAILURE(dir, in, args, out, code, needle)                                                     \
	expect_failure_at((dir), (in), (args), (out), (code), (needle), __FILE__, __LINE__)

#endif
