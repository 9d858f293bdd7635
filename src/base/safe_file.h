/**
 * @file safe_file.h
 * Opening files named by a config or the command line without trusting what
 * the name points at. Every reader of a config, @include, filter or noise
 * file and every writer of an output goes through here, so that a FIFO, a
 * device node, a directory or (where it matters) a symlink is refused with a
 * clear message instead of hanging open(), killing a library that calls
 * exit(), or being replaced by a regular file.
 *
 * Any thread except the audio path (these call open/fstat and may allocate).
 */
#ifndef GPUFIR_SAFE_FILE_H
#define GPUFIR_SAFE_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

enum gf_open_flags {
	GF_OPEN_NOFOLLOW = 1, /**< refuse a symlink as the last component */
};

/**
 * Open @p path read-only, refusing anything but a regular file. The open
 * itself uses O_NONBLOCK (a FIFO cannot block it; O_NONBLOCK is cleared
 * again before returning). @p what names the file in messages ("config",
 * "filter file"). @return a descriptor (O_CLOEXEC), or GF_E_IO with
 * "PATH: why" in @p eb
 */
int gf_file_open_read(const char *path, const char *what, int flags, struct gf_errbuf *eb);

/** gf_file_open_read() as a stdio stream. @return 0 or GF_E_IO / GF_E_NOMEM */
int gf_file_fopen_read(const char *path, const char *what, int flags, FILE **fp, struct gf_errbuf *eb);

/**
 * Read all of a regular file into a NUL-terminated buffer, at most
 * @p max_bytes. Reads stop at the size fstat reported when opened, so a
 * file that claims size 0 but streams data (/proc, /sys) reads as empty.
 * @return 0, GF_E_IO (unreadable, not regular, larger than @p max_bytes)
 *         or GF_E_NOMEM
 */
int gf_file_read_all(const char *path, const char *what, size_t max_bytes, char **buf, size_t *len,
		     struct gf_errbuf *eb);

/** gf_file_read_all of a descriptor from gf_file_open_read (@p path for messages); @p fd stays open. */
int gf_file_read_fd(int fd, const char *path, const char *what, size_t max_bytes, char **buf, size_t *len,
		    struct gf_errbuf *eb);

/**
 * What @p path is, for messages: "a directory", "a FIFO", "a character
 * device", ... or NULL for a regular file or a path that does not exist.
 * Does not follow a final symlink when @p nofollow ("a symbolic link").
 */
const char *gf_file_kind(const char *path, int nofollow);

/** Describe st_mode @p mode: NULL for a regular file, else "a FIFO", ... */
const char *gf_file_mode_kind(mode_t mode);

#endif
