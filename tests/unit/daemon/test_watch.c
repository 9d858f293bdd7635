/* watch.c: each way of saving a watched file (in place, editor rename-over,
 * backup-and-rewrite, touch, symlink swap) yields exactly one debounced
 * change; unrelated files and reads in the same directory yield none. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "testutil.h"
#include "watch.h"

#define DEBOUNCE_MS 150 /* as the daemon uses; the slow writer pauses far less */

static char dir[512], conf[600], taps[600], other[600], tmp[600];

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Debounced changes reported within @p window_ms; the last one's name in @p last. */
static int count_changes(struct gf_watch *w, int window_ms, char *last, size_t last_len)
{
	int n = 0;
	int64_t end = gf_now_ms() + window_ms;
	for (int64_t left; (left = end - gf_now_ms()) > 0;) {
		int t = gf_watch_timeout_ms(w);
		struct pollfd p = {.fd = gf_watch_fd(w), .events = POLLIN};
		poll(&p, 1, t >= 0 && t < left ? t : (int)left);
		gf_watch_read(w);
		const char *name = NULL;
		if (gf_watch_take(w, &name)) {
			n++;
			if (last)
				snprintf(last, last_len, "%s", name);
		}
	}
	return n;
}

static void write_file(const char *path, const char *text, int pieces)
{
	FILE *f = fopen(path, "w");
	CHECK(f);
	size_t len = strlen(text), step = len / (size_t)pieces + 1;
	for (size_t off = 0; off < len; off += step) {
		fwrite(text + off, 1, off + step > len ? len - off : step, f);
		fflush(f);
		sleep_ms(10); /* a slow writer: the burst must still be one change */
	}
	CHECK(fclose(f) == 0);
}

static void expect(struct gf_watch *w, int want, const char *want_name, const char *what)
{
	char last[600] = "";
	int got = count_changes(w, DEBOUNCE_MS * 4, last, sizeof(last));
	if (got != want || (want_name && strcmp(last, want_name) != 0)) {
		fprintf(stderr, "%s: %d changes (last '%s'), want %d ('%s')\n", what, got, last, want,
			want_name ? want_name : "");
		exit(1);
	}
}

static void touch(const char *path)
{
	/* What touch(1) does: open for writing (creating), set times, close. */
	int fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY, 0644);
	CHECK(fd >= 0);
	CHECK(futimens(fd, NULL) == 0);
	close(fd);
}

static void saves(struct gf_watch *w)
{
	write_file(conf, "a = 1;\nb = 2;\nc = 3;\n", 3);
	expect(w, 1, conf, "in-place edit");

	write_file(tmp, "a = 2;\n", 1);
	CHECK(rename(tmp, conf) == 0);
	expect(w, 1, conf, "rename-over save");

	char backup[700];
	snprintf(backup, sizeof(backup), "%s~", conf);
	CHECK(rename(conf, backup) == 0); /* vim, backupcopy=no */
	write_file(conf, "a = 3;\n", 2);
	CHECK(unlink(backup) == 0);
	expect(w, 1, conf, "backup-and-rewrite save");

	touch(taps);
	expect(w, 1, taps, "touch of a referenced file");

	CHECK(utimensat(AT_FDCWD, taps, NULL, 0) == 0); /* touch without write permission */
	expect(w, 1, taps, "utimensat of a referenced file");

	for (int i = 0; i < 5; i++)
		write_file(conf, "a = 4;\n", 1); /* rapid saves within the debounce time */
	expect(w, 1, conf, "burst of saves");

	/* Saves further apart than the debounce time (the watcher reading all
	 * along, as the daemon's loop does) are separate changes. */
	write_file(conf, "a = 5;\n", 1);
	CHECK(count_changes(w, DEBOUNCE_MS * 3, NULL, 0) == 1);
	write_file(taps, "1 2 3\n", 1);
	CHECK(count_changes(w, DEBOUNCE_MS * 3, NULL, 0) == 1);
}

static void unrelated(struct gf_watch *w)
{
	write_file(other, "x\n", 1);
	write_file(tmp, "x\n", 1);
	CHECK(rename(tmp, other) == 0);
	touch(tmp);
	unlink(tmp);
	char buf[64];
	FILE *f = fopen(conf, "r"); /* the daemon reading its own config */
	CHECK(f);
	CHECK(fread(buf, 1, sizeof(buf), f) > 0);
	fclose(f);
	expect(w, 0, NULL, "unrelated files and reads");
}

static void symlinked(struct gf_watch *w)
{
	char real_dir[600], real[700], link[600], real_tmp[700];
	snprintf(real_dir, sizeof(real_dir), "%s/real", dir);
	snprintf(real, sizeof(real), "%s/x.conf", real_dir);
	snprintf(real_tmp, sizeof(real_tmp), "%s/x.conf.new", real_dir);
	snprintf(link, sizeof(link), "%s/link.conf", dir);
	CHECK(mkdir(real_dir, 0755) == 0);
	write_file(real, "a = 1;\n", 1);
	CHECK(symlink(real, link) == 0);
	char *files[] = {link};
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_watch_set_files(w, files, 1, &eb), &eb);
	CHECK(eb.msg[0] == '\0');

	write_file(real_tmp, "a = 2;\n", 1); /* the target replaced in its own directory */
	CHECK(rename(real_tmp, real) == 0);
	expect(w, 1, link, "rename-over of a symlink's target");

	CHECK(unlink(link) == 0); /* ln -sf: the link itself re-pointed */
	CHECK(symlink(real, link) == 0);
	expect(w, 1, link, "symlink replaced");

	touch(conf); /* no longer in the set */
	touch(taps);
	expect(w, 0, NULL, "files dropped from the set");
	unlink(link);
	unlink(real);
	rmdir(real_dir);
}

int main(void)
{
	char *d = gf_test_tmpdir("watch");
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(conf, sizeof(conf), "%s/gpufir.conf", dir);
	snprintf(taps, sizeof(taps), "%s/taps.txt", dir);
	snprintf(other, sizeof(other), "%s/other.txt", dir);
	snprintf(tmp, sizeof(tmp), "%s/gpufir.conf.tmp", dir);
	write_file(conf, "a = 0;\n", 1);
	write_file(taps, "1\n", 1);

	struct gf_watch *w = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_watch_new(&w, DEBOUNCE_MS, &eb), &eb);
	char *files[] = {conf, taps};
	CHECK_OK_EB(gf_watch_set_files(w, files, 2, &eb), &eb);
	CHECK(eb.msg[0] == '\0');
	CHECK(gf_watch_timeout_ms(w) == -1);

	saves(w);
	unrelated(w);
	/* Setting the same set again (every reload does) loses no watch. */
	CHECK_OK(gf_watch_set_files(w, files, 2, &eb));
	touch(conf);
	expect(w, 1, conf, "after re-setting the same files");
	symlinked(w);

	/* A file in a missing directory: a warning, the rest still watched. */
	char missing[700];
	snprintf(missing, sizeof(missing), "%s/nodir/x.txt", dir);
	char *files2[] = {missing, conf};
	eb.msg[0] = '\0';
	CHECK_OK(gf_watch_set_files(w, files2, 2, &eb));
	CHECK(strstr(eb.msg, "nodir") != NULL);
	touch(conf);
	expect(w, 1, conf, "with a missing directory in the set");

	gf_watch_free(w);
	unlink(conf);
	unlink(taps);
	unlink(other);
	rmdir(dir);
	puts("test_watch: ok");
	return 0;
}
