/*
 * Temporary outputs beside their targets (temp_file.h). The name carries the
 * writer's pid, ".NAME.gpufir-PID-XXXXXX", so "left behind" is provable:
 * that process no longer exists.
 */
#define _GNU_SOURCE
#include "temp_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "safe_file.h"

/* A run on another host (NFS) has a pid that means nothing here: its file is
 * written continuously, so only a temporary this old is ever removed. */
#define STALE_AGE_S 60
#define NAME_KEEP 200 /* bytes of the target's name kept in the temporary's (NAME_MAX 255) */

/*
 * One slot per file being written: a batch's lanes each write one at a time.
 * A slot is claimed by its writer (0 -> 2), filled, then published (1); the
 * signal handler takes published slots (1 -> 0) and unlinks them.
 */
#define TEMP_SLOTS 256 /* a batch's most lanes */
static struct {
	int dirfd;
	char name[256];
} temp_slot[TEMP_SLOTS];
static atomic_int temp_state[TEMP_SLOTS]; /* lock-free: read by a signal handler */

static int slot_register(int dirfd, const char *name)
{
	if (strlen(name) >= sizeof(temp_slot[0].name))
		return -1; /* cannot happen: the name is cut to NAME_KEEP bytes */
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int free_state = 0;
		if (!atomic_compare_exchange_strong(&temp_state[i], &free_state, 2))
			continue;
		temp_slot[i].dirfd = dirfd;
		memcpy(temp_slot[i].name, name, strlen(name) + 1);
		atomic_store(&temp_state[i], 1);
		return i;
	}
	return -1;
}

static void slot_forget(int *slot)
{
	if (*slot >= 0)
		atomic_store(&temp_state[*slot], 0);
	*slot = -1;
}

void gf_temp_unlink_now(void)
{
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int published = 1;
		if (atomic_compare_exchange_strong(&temp_state[i], &published, 0))
			unlinkat(temp_slot[i].dirfd, temp_slot[i].name, 0); /* async-signal-safe */
	}
}

int gf_path_split(const char *path, char **dir, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, (size_t)(slash - path));
	return *dir ? 0 : GF_E_NOMEM;
}

/* Six letters that differ between calls, processes and hosts' clocks. */
static void random_suffix(char out[7])
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static atomic_uint_fast64_t counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
		     (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
	for (int i = 0; i < 6; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 33;
		out[i] = abc[x % (sizeof(abc) - 1)];
	}
	out[6] = '\0';
}

int gf_temp_create_at(int dirfd, const char *name, int is_dir, char **tmp)
{
	char buf[256];
	for (int attempt = 0; attempt < 100; attempt++) {
		char sfx[7];
		random_suffix(sfx);
		snprintf(buf, sizeof(buf), ".%.*s.gpufir-%ld-%s", NAME_KEEP, name, (long)getpid(), sfx);
		int r = is_dir ? mkdirat(dirfd, buf, 0777)
			       : openat(dirfd, buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					0666);
		if (r < 0 && errno == EEXIST)
			continue;
		if (r < 0)
			return -errno;
		if (!(*tmp = strdup(buf))) {
			if (is_dir)
				unlinkat(dirfd, buf, AT_REMOVEDIR);
			else
				close(r), unlinkat(dirfd, buf, 0);
			return -ENOMEM;
		}
		return r;
	}
	return -EEXIST;
}

static void temp_free(struct gf_temp_file *t)
{
	slot_forget(&t->slot);
	if (t->fd >= 0)
		close(t->fd);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t->dir);
	free(t->tmp);
	free(t->name);
	*t = (struct gf_temp_file)GF_TEMP_FILE_INIT;
}

/* The target as it is now: nothing, or a regular file (GF_TEMP_REGULAR_ONLY). */
static int check_target(const struct gf_temp_file *t, const char *path, struct gf_errbuf *eb)
{
	struct stat st;
	if (fstatat(t->dirfd, t->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	const char *kind = gf_file_mode_kind(st.st_mode);
	if (!kind)
		return 0;
	gf_errbuf_set(eb,
		      "%s is %s: gpufir writes regular files only (the file is replaced by a finished "
		      "one); give another name",
		      path, kind);
	return GF_E_IO;
}

int gf_temp_open(struct gf_temp_file *t, const char *path, int flags, struct gf_errbuf *eb)
{
	*t = (struct gf_temp_file)GF_TEMP_FILE_INIT;
	const char *name;
	if (gf_path_split(path, &t->dir, &name) || !(t->name = strdup(name))) {
		temp_free(t);
		return GF_E_NOMEM;
	}
	int err = 0;
	/* O_PATH: a folder one may write but not list (a drop box) still takes the file */
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		gf_errbuf_set(eb, "%s: not a file name", path);
		err = GF_E_IO;
	} else if ((t->dirfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		gf_errbuf_set(eb, "cannot create the output in directory %s: %s", t->dir, strerror(errno));
		err = GF_E_IO;
	} else if (flags & GF_TEMP_REGULAR_ONLY) {
		err = check_target(t, path, eb);
	}
	if (!err) {
		gf_temp_sweep(t->dirfd, t->dir);
		t->fd = gf_temp_create_at(t->dirfd, t->name, 0, &t->tmp);
		if (t->fd < 0) {
			gf_errbuf_set(eb, "cannot create the output in directory %s: %s", t->dir,
				      strerror(-t->fd));
			err = t->fd == -ENOMEM ? GF_E_NOMEM : GF_E_IO;
		}
	}
	if (err) {
		temp_free(t);
		return err;
	}
	t->slot = slot_register(t->dirfd, t->tmp);
	return 0;
}

int gf_temp_commit(struct gf_temp_file *t, const char *path, struct gf_errbuf *eb)
{
	int err = 0;
	if (t->fd >= 0 && close(t->fd) != 0) {
		gf_errbuf_set(eb, "%s: write failed: %s", path, strerror(errno));
		err = GF_E_IO;
	}
	t->fd = -1;
	if (!err && renameat(t->dirfd, t->tmp, t->dirfd, t->name) != 0) {
		gf_errbuf_set(eb, "cannot rename the finished output to %s: %s", path, strerror(errno));
		err = GF_E_IO;
	}
	if (err)
		unlinkat(t->dirfd, t->tmp, 0);
	temp_free(t);
	return err;
}

void gf_temp_discard(struct gf_temp_file *t)
{
	if (t->dirfd >= 0 && t->tmp)
		unlinkat(t->dirfd, t->tmp, 0);
	temp_free(t);
}

/* The pid in ".NAME.gpufir-PID-XXXXXX", or 0 when @p name is not such a name. */
static long temp_pid(const char *name)
{
	const char *g = name[0] == '.' ? strstr(name, ".gpufir-") : NULL;
	if (!g)
		return 0;
	const char *last;
	while ((last = strstr(g + 1, ".gpufir-")))
		g = last;
	char *end;
	long pid = strtol(g + 8, &end, 10);
	if (pid <= 0 || *end != '-' || strlen(end + 1) != 6)
		return 0;
	return pid;
}

void gf_temp_sweep(int dirfd, const char *dir)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		long pid = temp_pid(e->d_name);
		if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || now - st.st_mtime < STALE_AGE_S)
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0)
			gf_notice(
				"removed %s/%s (%lld bytes): the unfinished output of gpufir pid %ld, which "
				"no longer runs",
				dir, e->d_name, (long long)st.st_size, pid);
	}
	closedir(d);
}
