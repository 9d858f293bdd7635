/**
 * @file temp_file.h
 * Outputs that appear only finished: a file (or a folder of files) is
 * written under a hidden temporary name beside its target,
 * ".NAME.gpufir-PID-XXXXXX", and renamed over the target when complete, or
 * removed. The target's folder is opened once and every later step (create,
 * rename, remove) is relative to that descriptor, so a folder renamed or
 * replaced while the file is written cannot make the rename or the clean-up
 * hit another file, or leave the temporary behind.
 *
 * A fatal signal's handler removes every temporary file being written
 * (gf_temp_unlink_now); a temporary that a killed run (kill -9) left is
 * removed by the next run that writes into the same folder (gf_temp_sweep).
 *
 * Control side (any thread but the audio path): these block on the file system.
 */
#ifndef GPUFIR_TEMP_FILE_H
#define GPUFIR_TEMP_FILE_H

#include "error.h"

enum gf_temp_flags {
	/** Refuse a target that exists as anything but a regular file, a symlink included. */
	GF_TEMP_REGULAR_ONLY = 1,
};

/** A temporary file being written; zero-initialise, or use GF_TEMP_FILE_INIT. */
struct gf_temp_file {
	int dirfd;  /**< the target's folder, opened once */
	char *dir;  /**< that folder as named, for messages */
	char *name; /**< the target's last component */
	char *tmp;  /**< the temporary's name in dirfd */
	int fd;	    /**< the temporary, open for writing; -1 once closed */
	int slot;   /**< its entry for the fatal-signal handler, or -1 */
};
#define GF_TEMP_FILE_INIT                                                                                    \
	{                                                                                                    \
		.dirfd = -1, .fd = -1, .slot = -1                                                            \
	}

/**
 * Split @p path into its folder (malloc'ed: "." when it has no '/') and its
 * last component (a pointer into @p path; "" when @p path ends in '/').
 * @return 0 or GF_E_NOMEM
 */
int gf_path_split(const char *path, char **dir, const char **name);

/**
 * Create the temporary output for @p path (permissions: a new file's, 0666
 * less the umask). Temporaries of dead runs in the folder are swept first.
 * @return 0, or GF_E_IO with "PATH: why" in @p eb (no folder, not writable, a
 * target that is not a regular file under GF_TEMP_REGULAR_ONLY); @p t then
 * holds nothing to free
 */
int gf_temp_open(struct gf_temp_file *t, const char *path, int flags, struct gf_errbuf *eb);

/**
 * Close the temporary and rename it over the target. On failure (a close or
 * rename error) the temporary is removed and the target left as it was.
 * @p path names the target in messages. Frees @p t. @return 0 or GF_E_IO
 */
int gf_temp_commit(struct gf_temp_file *t, const char *path, struct gf_errbuf *eb);

/** Remove the temporary and free @p t (accepts an unopened one). */
void gf_temp_discard(struct gf_temp_file *t);

/**
 * Make a hidden temporary entry for @p name in @p dirfd: a file (returned
 * descriptor, open for writing) or, with @p is_dir, a folder (returns 0).
 * *@p tmp gets its malloc'ed name. @return the descriptor or 0, or -errno
 */
int gf_temp_create_at(int dirfd, const char *name, int is_dir, char **tmp);

/**
 * Remove every temporary being written. Async-signal-safe: for the handlers
 * of fatal signals, which then die by the signal.
 */
void gf_temp_unlink_now(void);

/**
 * Remove the temporary files in @p dirfd (named @p dir in the notice) that a
 * run which no longer exists left: owned by this user and unchanged for a
 * minute (a run on another host of a network file system writes
 * continuously, and its pid means nothing here).
 */
void gf_temp_sweep(int dirfd, const char *dir);

#endif
