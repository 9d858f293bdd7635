/*
 * --export-filters DIR: the final per-channel FIRs (after chains, gains,
 * delays and padding: exactly what the engine convolves with) as files other
 * tools read. One file per channel, because that is what most convolvers
 * (CamillaDSP, BruteFIR, SoX, REW's import) take; filters.conf ties them back
 * together for gpufir.
 *
 * The files are a set: filters.conf names the WAV files of the same export.
 * So the set is written into a hidden folder beside DIR and takes DIR's
 * place in one rename (an exchange where DIR exists), and DIR never holds
 * half of a new set beside half of an old one. Every step is relative to
 * DIR's parent, opened once.
 */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "safe_file.h"
#include "taps_io.h"
#include "temp_file.h"
#include "tools.h"

struct export
{
	const char *path;  /* DIR as given, for messages */
	char *dir;	   /* DIR without trailing slashes */
	char *parent_name; /* its folder, for messages */
	const char *name;  /* its last component (in dir) */
	int parent;	   /* its folder, opened once */
	char *tmp;	   /* the new set's folder, in parent */
	int tmpfd;	   /* that folder */
	int replace;	   /* DIR exists: the new set is exchanged with the old one */
	mode_t mode;	   /* an existing DIR's permissions, kept */
	char source[512];  /* the config's name with control characters as '?' */
};

/*
 * The signals that end the program (main.c's handlers) wait while the set is
 * written and are checked between files: a signal then removes the
 * unfinished folder before it ends the program, which a handler could not
 * do safely (the folder holds several files).
 */
static const int stop_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGPIPE,	 SIGQUIT, SIGUSR1, SIGUSR2,
				   SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPOLL};

static void stop_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(set, stop_signals[i]);
}

static int stop_pending(struct gf_errbuf *eb)
{
	sigset_t pending;
	sigpending(&pending);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		if (sigismember(&pending, stop_signals[i])) {
			gf_errbuf_set(eb, "interrupted: nothing was exported");
			return GF_E_INTERRUPTED;
		}
	}
	return 0;
}

/* Only what an export writes: filters.conf, channel-N.wav, channel-N.txt. */
static int export_name(const char *s)
{
	if (strcmp(s, "filters.conf") == 0)
		return 1;
	if (strncmp(s, "channel-", 8) != 0)
		return 0;
	s += 8;
	const char *d = s;
	while (*s >= '0' && *s <= '9')
		s++;
	return s > d && (strcmp(s, ".wav") == 0 || strcmp(s, ".txt") == 0);
}

/* A name in a '#' comment stays one line: no newline can start a setting of its own. */
static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < len; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	dst[i] = '\0';
}

/* Remove a set's folder: its export files, then the folder. -1 when something else is in it. */
static int remove_set(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (export_name(e->d_name))
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	return unlinkat(parent, name, AT_REMOVEDIR);
}

/* An existing DIR: a real folder holding a previous export and no input of this one. */
static int check_old_set(struct export *x, const char *const *inputs, struct gf_errbuf *eb)
{
	int fd = openat(x->parent, x->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		gf_errbuf_set(eb, "%s: cannot read the folder: %s", x->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return GF_E_IO;
	}
	int err = 0;
	for (struct dirent *e; !err && (e = readdir(d));) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char target[4096];
		snprintf(target, sizeof(target), "%s/%s", x->dir, e->d_name);
		if (!export_name(e->d_name) || fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode)) {
			gf_errbuf_set(eb,
				      "%s holds %s, which an export does not write: export into a new or "
				      "empty folder, or over a previous export (nothing was changed)",
				      x->path, e->d_name);
			err = GF_E_IO;
		} else {
			err = gf_tool_not_an_input(inputs, &st, target, eb);
		}
	}
	closedir(d);
	return err;
}

/* DIR: a new name, or a folder (not a symlink to one) that an export may replace. */
static int check_target(struct export *x, const char *const *inputs, struct gf_errbuf *eb)
{
	struct stat st;
	if (fstatat(x->parent, x->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		gf_errbuf_set(eb, "%s: %s", x->path, strerror(errno));
		return GF_E_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		const char *kind = gf_file_mode_kind(st.st_mode);
		gf_errbuf_set(eb, "%s exists and is %s, not a folder: give a folder name", x->path,
			      kind ? kind : "a file");
		return GF_E_IO;
	}
	x->replace = 1;
	x->mode = st.st_mode & 07777;
	return check_old_set(x, inputs, eb);
}

/* Split DIR, open its parent once, check DIR, make the new set's hidden folder. */
static int export_open(struct export *x, const char *dir, const char *const *inputs, struct gf_errbuf *eb)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!(x->dir = strndup(dir, n)) || gf_path_split(x->dir, &x->parent_name, &x->name))
		return GF_E_NOMEM;
	if (!*x->name || strcmp(x->name, ".") == 0 || strcmp(x->name, "..") == 0) {
		gf_errbuf_set(eb, "%s: give the folder by its name (not '.', '..' or '/')", dir);
		return GF_E_IO;
	}
	x->parent = open(x->parent_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (x->parent < 0) {
		gf_errbuf_set(eb, "%s: cannot create the folder in %s: %s", dir, x->parent_name,
			      strerror(errno));
		return GF_E_IO;
	}
	int err = check_target(x, inputs, eb);
	if (err)
		return err;
	int r = gf_temp_create_at(x->parent, x->name, 1, &x->tmp);
	if (r >= 0)
		x->tmpfd = openat(x->parent, x->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r < 0 || x->tmpfd < 0) {
		gf_errbuf_set(eb, "%s: cannot create the folder in %s: %s", dir, x->parent_name,
			      strerror(r < 0 ? -r : errno));
		return GF_E_IO;
	}
	if (x->replace && fchmod(x->tmpfd, x->mode) != 0)
		gf_debug("%s: cannot keep the folder's permissions: %s", dir, strerror(errno));
	return 0;
}

/* Create NAME in the new set's folder: a descriptor, or -1 with the message set. */
static int create_file(const struct export *x, const char *name, char *shown, size_t len,
		       struct gf_errbuf *eb)
{
	snprintf(shown, len, "%s/%s", x->dir, name);
	int fd = openat(x->tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		gf_errbuf_set(eb, "%s: cannot create: %s", shown, strerror(errno));
	return fd;
}

static int close_file(int fd, const char *shown, int err, struct gf_errbuf *eb)
{
	if (close(fd) != 0 && !err) {
		gf_errbuf_set(eb, "%s: write error: %s", shown, strerror(errno));
		return GF_E_IO;
	}
	return err;
}

/* One channel's two files. */
static int write_channel(const struct export *x, const struct gf_filter_set *fs, uint32_t c, uint32_t rate,
			 struct gf_errbuf *eb)
{
	char name[64], shown[4200], comment[700];
	snprintf(comment, sizeof(comment), "gpufir --export-filters: channel %u of %s, %u taps at %u Hz", c,
		 x->source, fs->taps, rate);
	const float *h = gf_filter_set_channel(fs, c);
	snprintf(name, sizeof(name), "channel-%u.wav", c);
	int fd = create_file(x, name, shown, sizeof(shown), eb);
	if (fd < 0)
		return GF_E_IO;
	int r = close_file(fd, shown, gf_taps_write_wav(fd, shown, h, fs->taps, rate, eb), eb);
	if (r)
		return r;
	snprintf(name, sizeof(name), "channel-%u.txt", c);
	if ((fd = create_file(x, name, shown, sizeof(shown), eb)) < 0)
		return GF_E_IO;
	return close_file(fd, shown, gf_taps_write_text(fd, shown, h, fs->taps, comment, eb), eb);
}

static int write_config(const struct export *x, const struct gf_filter_set *fs, uint32_t rate,
			struct gf_errbuf *eb)
{
	char shown[4200];
	int fd = create_file(x, "filters.conf", shown, sizeof(shown), eb);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!fp) {
		if (fd >= 0)
			close(fd);
		return fd >= 0 ? GF_E_NOMEM : GF_E_IO;
	}
	fprintf(fp, "# gpufir --export-filters: the final filters of %s at %u Hz,\n", x->source, rate);
	fprintf(fp, "# one 32-bit float WAV per channel (channel-N.txt: the same taps as text).\n");
	fprintf(fp, "sample_rate = %u;\nfilters = (\n", rate);
	for (uint32_t c = 0; c < fs->channels; c++)
		fprintf(fp, "  { name = \"channel%u\"; file = \"channel-%u.wav\"; }%s\n", c, c,
			c + 1 < fs->channels ? "," : "");
	if (gf_filter_set_is_mixer(fs)) { /* channel-N is path N: the mixer again, its gains in the taps */
		fprintf(fp, ");\nmixer = {\n  inputs = %u;\n  outputs = %u;\n  paths = (\n", fs->inputs,
			fs->outputs);
		for (uint32_t c = 0; c < fs->channels; c++)
			fprintf(fp, "    { in = %u; out = %u; chain = [\"channel%u\"]; }%s\n", fs->path_in[c],
				fs->path_out[c], c, c + 1 < fs->channels ? "," : "");
		fprintf(fp, "  );\n};\n");
	} else {
		fprintf(fp, ");\nroutes = (\n");
		for (uint32_t c = 0; c < fs->channels; c++)
			fprintf(fp, "  { channel = %u; chain = [\"channel%u\"]; }%s\n", c, c,
				c + 1 < fs->channels ? "," : "");
		fprintf(fp, ");\n");
	}
	int bad = ferror(fp);
	if (fclose(fp) != 0 || bad) {
		gf_errbuf_set(eb, "%s: write error: %s", shown, strerror(errno));
		return GF_E_IO;
	}
	return 0;
}

/* The new set takes DIR's place; an old one is exchanged out and removed. */
static int export_commit(struct export *x, struct gf_errbuf *eb)
{
	int r = x->replace ? renameat2(x->parent, x->tmp, x->parent, x->name, RENAME_EXCHANGE)
			   : renameat(x->parent, x->tmp, x->parent, x->name);
	if (r != 0) {
		gf_errbuf_set(eb, "%s: cannot put the exported files in place: %s%s", x->path,
			      strerror(errno),
			      x->replace && errno == EINVAL
				      ? " (this file system cannot exchange folders: export into a new one)"
				      : "");
		return GF_E_IO;
	}
	if (x->replace && remove_set(x->parent, x->tmp) != 0)
		gf_warn("%s: the previous export is left in %s/%s: files appeared in it meanwhile", x->path,
			x->parent_name, x->tmp);
	free(x->tmp);
	x->tmp = NULL; /* nothing to remove any more */
	return 0;
}

static void export_close(struct export *x)
{
	if (x->tmpfd >= 0)
		close(x->tmpfd);
	if (x->tmp && remove_set(x->parent, x->tmp) != 0)
		gf_warn("%s: cannot remove the unfinished export %s/%s", x->path, x->parent_name, x->tmp);
	if (x->parent >= 0)
		close(x->parent);
	free(x->tmp);
	free(x->dir);
	free(x->parent_name);
}

int gf_export_filters(const char *dir, const struct gf_filter_set *fs, uint32_t rate, const char *source,
		      const char *const *inputs, struct gf_errbuf *eb)
{
	struct export x = {.path = dir, .parent = -1, .tmpfd = -1};
	sigset_t stops, old;
	stop_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &old);
	sanitize(x.source, sizeof(x.source), source);
	int r = export_open(&x, dir, inputs, eb);
	for (uint32_t c = 0; !r && c < fs->channels; c++)
		if (!(r = stop_pending(eb)))
			r = write_channel(&x, fs, c, rate, eb);
	if (!r)
		r = write_config(&x, fs, rate, eb);
	if (!r && !(r = stop_pending(eb)))
		r = export_commit(&x, eb);
	export_close(&x);
	sigprocmask(SIG_SETMASK, &old, NULL); /* a pending signal acts now, the folder gone */
	return r;
}

int gf_tool_run_export(const struct gf_cli *cli)
{
	struct gf_tool_build b;
	struct gf_errbuf eb = {{0}};
	int err = gf_tool_build(cli, &b, &eb);
	const char *source = cli->config ? cli->config : "the built-in default configuration";
	if (!err) {
		gf_info("building at %u Hz (from %s)", b.rate, b.rate_from);
		err = gf_export_filters(cli->export_dir, b.fs, b.rate, source, b.inputs, &eb);
	}
	if (!err)
		printf("%s: %u channel%s of %u taps at %u Hz (from %s): channel-N.wav, channel-N.txt, "
		       "filters.conf\n",
		       cli->export_dir, b.fs->channels, b.fs->channels == 1 ? "" : "s", b.fs->taps, b.rate,
		       b.rate_from);
	else
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_tool_build_free(&b);
	return gf_tool_exit(err);
}
