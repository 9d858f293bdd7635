/*
 * Safe opens: O_NONBLOCK so that open() of a FIFO returns at once, then
 * fstat on the descriptor itself (no check-then-open race), then refuse
 * anything that is not a regular file.
 */
#define _GNU_SOURCE
#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *gf_file_mode_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return NULL;
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

const char *gf_file_kind(const char *path, int nofollow)
{
	struct stat st;
	if ((nofollow ? lstat(path, &st) : stat(path, &st)) != 0)
		return NULL;
	return gf_file_mode_kind(st.st_mode);
}

int gf_file_open_read(const char *path, const char *what, int flags, struct gf_errbuf *eb)
{
	int of = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	if (flags & GF_OPEN_NOFOLLOW)
		of |= O_NOFOLLOW;
	int fd = open(path, of);
	if (fd < 0) {
		if (errno == ELOOP && (flags & GF_OPEN_NOFOLLOW))
			gf_errbuf_set(eb, "%s: the %s is a symbolic link: give the file itself", path, what);
		else
			gf_errbuf_set(eb, "%s: cannot open the %s: %s", path, what, strerror(errno));
		return GF_E_IO;
	}
	struct stat st;
	const char *kind = NULL;
	if (fstat(fd, &st) != 0 || (kind = gf_file_mode_kind(st.st_mode))) {
		gf_errbuf_set(eb, "%s: the %s is %s, not a regular file", path, what,
			      kind ? kind : "not readable");
		close(fd);
		return GF_E_IO;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int gf_file_fopen_read(const char *path, const char *what, int flags, FILE **fp, struct gf_errbuf *eb)
{
	*fp = NULL;
	int fd = gf_file_open_read(path, what, flags, eb);
	if (fd < 0)
		return fd;
	if (!(*fp = fdopen(fd, "rb"))) {
		close(fd);
		return GF_E_NOMEM;
	}
	return 0;
}

int gf_file_read_fd(int fd, const char *path, const char *what, size_t max_bytes, char **buf, size_t *len,
		    struct gf_errbuf *eb)
{
	*buf = NULL;
	*len = 0;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < 0 || (unsigned long long)st.st_size > max_bytes) {
		if (max_bytes >= (1u << 20) && !(max_bytes & ((1u << 20) - 1u)))
			gf_errbuf_set(eb, "%s: the %s is larger than %zu MiB", path, what, max_bytes >> 20);
		else /* a small limit (a state file's 4096 bytes) in MiB would read "0 MiB" */
			gf_errbuf_set(eb, "%s: the %s is larger than %zu bytes", path, what, max_bytes);
		return GF_E_IO;
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *b = malloc(size + 1);
	if (!b)
		return GF_E_NOMEM;
	while (got < size) {
		ssize_t n = read(fd, b + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gf_errbuf_set(eb, "%s: read error: %s", path, strerror(errno));
			free(b);
			return GF_E_IO;
		}
		if (n == 0)
			break; /* shrank while we read: use what is there */
		got += (size_t)n;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int gf_file_read_all(const char *path, const char *what, size_t max_bytes, char **buf, size_t *len,
		     struct gf_errbuf *eb)
{
	*buf = NULL;
	*len = 0;
	int fd = gf_file_open_read(path, what, 0, eb);
	if (fd < 0)
		return fd;
	int r = gf_file_read_fd(fd, path, what, max_bytes, buf, len, eb);
	close(fd);
	return r;
}
