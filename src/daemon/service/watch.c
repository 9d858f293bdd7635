#include "watch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

/* What counts as "saved": a write closed, a file renamed into place, a
 * symbolic link (re)created, or attributes changed (touch without write
 * permission). Reads (ours included) and deletions do not: a deleted file
 * leaves the running filter as it is. */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB | IN_ONLYDIR)

struct watch_entry {
	int wd; /**< watch on dir; shared by entries in the same directory */
	char *dir;
	char *name; /**< basename within dir */
	char *path; /**< as given (reported to the caller) */
};

struct gf_watch {
	int fd;
	uint32_t debounce_ms;
	struct watch_entry *e;
	uint32_t n;
	int pending;
	int64_t last_event_ms;
	char last_path[PATH_MAX];
};

int gf_watch_new(struct gf_watch **out, uint32_t debounce_ms, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return GF_E_NOMEM;
	w->debounce_ms = debounce_ms;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		gf_errbuf_set(eb, "inotify: %s", strerror(errno));
		free(w);
		return GF_E_SYSTEM;
	}
	*out = w;
	return 0;
}

static void free_entries(struct watch_entry *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(e[i].dir);
		free(e[i].name);
		free(e[i].path);
	}
	free(e);
}

void gf_watch_free(struct gf_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free_entries(w->e, w->n);
	free(w);
}

int gf_watch_fd(const struct gf_watch *w)
{
	return w->fd;
}

/* Split @p file into an entry (dir, name) and add the directory watch. */
static int add_entry(struct gf_watch *w, struct watch_entry *en, const char *file, const char *shown,
		     struct gf_errbuf *eb)
{
	const char *slash = strrchr(file, '/');
	en->wd = -1;
	en->dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	en->name = strdup(slash ? slash + 1 : file);
	en->path = strdup(shown);
	if (!en->dir || !en->name || !en->path)
		return GF_E_NOMEM;
	en->wd = inotify_add_watch(w->fd, en->dir, WATCH_MASK);
	if (en->wd < 0)
		gf_errbuf_set(eb, "cannot watch %s for changes: %s: %s", shown, en->dir, strerror(errno));
	return 0;
}

static int wd_used(const struct watch_entry *e, uint32_t n, int wd)
{
	for (uint32_t i = 0; i < n; i++)
		if (e[i].wd == wd)
			return 1;
	return 0;
}

int gf_watch_set_files(struct gf_watch *w, char *const *files, uint32_t n, struct gf_errbuf *eb)
{
	/* Two entries per file at most: the path and, for a symlink, its target. */
	struct watch_entry *e = calloc((size_t)n * 2 + 1, sizeof(*e));
	uint32_t ne = 0;
	int err = e ? 0 : GF_E_NOMEM;
	for (uint32_t i = 0; i < n && !err; i++) {
		err = add_entry(w, &e[ne++], files[i], files[i], eb);
		struct stat st;
		char real[PATH_MAX];
		if (!err && lstat(files[i], &st) == 0 && S_ISLNK(st.st_mode) && realpath(files[i], real))
			err = add_entry(w, &e[ne++], real, files[i], eb);
	}
	if (err) {
		/* Keep the old set; drop watches only the new set had added. */
		for (uint32_t i = 0; i < ne; i++)
			if (e[i].wd >= 0 && !wd_used(w->e, w->n, e[i].wd))
				inotify_rm_watch(w->fd, e[i].wd);
		free_entries(e, ne);
		return err;
	}
	for (uint32_t i = 0; i < w->n; i++)
		if (w->e[i].wd >= 0 && !wd_used(e, ne, w->e[i].wd) && !wd_used(w->e, i, w->e[i].wd))
			inotify_rm_watch(w->fd, w->e[i].wd);
	free_entries(w->e, w->n);
	w->e = e;
	w->n = ne;
	return 0;
}

static const struct watch_entry *match(const struct gf_watch *w, const struct inotify_event *ev)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->e[i].wd == ev->wd && strcmp(w->e[i].name, ev->name) == 0)
			return &w->e[i];
	return NULL;
}

/* IN_CREATE counts only for symbolic links (`ln -sf`): a created regular file
 * is being written and reports IN_CLOSE_WRITE when it is complete. */
static int is_symlink(const struct watch_entry *en)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", en->dir, en->name);
	return lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
}

static int handle_event(struct gf_watch *w, const struct inotify_event *ev)
{
	const char *path = NULL;
	if (ev->mask & IN_Q_OVERFLOW) {
		path = w->n ? w->e[0].path : ""; /* events were lost: assume a change */
	} else if (ev->len > 0) {
		const struct watch_entry *en = match(w, ev);
		if (!en || ((ev->mask & IN_CREATE) && !is_symlink(en)))
			return 0;
		path = en->path;
	} else {
		return 0;
	}
	w->pending = 1;
	w->last_event_ms = gf_now_ms();
	snprintf(w->last_path, sizeof(w->last_path), "%s", path);
	return 1;
}

int gf_watch_read(struct gf_watch *w)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int count = 0;
	for (;;) {
		ssize_t len = read(w->fd, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break; /* EAGAIN: drained */
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			count += handle_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
	return count;
}

int gf_watch_timeout_ms(const struct gf_watch *w)
{
	if (!w->pending)
		return -1;
	int64_t left = w->last_event_ms + w->debounce_ms - gf_now_ms();
	return left > 0 ? (int)left : 0;
}

int gf_watch_take(struct gf_watch *w, const char **name)
{
	if (!w->pending || gf_watch_timeout_ms(w) > 0)
		return 0;
	w->pending = 0;
	if (name)
		*name = w->last_path;
	return 1;
}
