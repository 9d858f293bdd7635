/**
 * @file watch.h
 * Watch the configuration file and every file it references for changes, so
 * that saving any of them reloads the configuration.
 *
 * inotify watches each file's parent directory (and, for a symbolic link, the
 * directory of its target), not the file itself: editors that save by writing
 * a new file and renaming it over the old one replace the inode, which would
 * silently end a watch on the file. Events for other names in those
 * directories are ignored.
 *
 * An editor's save is a burst of events (truncate, writes, close, rename);
 * they are debounced: a change is reported once no further event for a
 * watched name has arrived for the debounce interval.
 *
 * Control thread only. Never blocks: the caller polls gf_watch_fd().
 */
#ifndef GPUFIR_WATCH_H
#define GPUFIR_WATCH_H

#include <stdint.h>

#include "error.h"

struct gf_watch;

/** @p debounce_ms: quiet time after the last event before a change is reported. */
int gf_watch_new(struct gf_watch **out, uint32_t debounce_ms, struct gf_errbuf *eb);

/** Accepts NULL. */
void gf_watch_free(struct gf_watch *w);

/**
 * Watch exactly these @p n files (replacing the previous set; a pending change
 * stays pending). Missing directories are skipped with a warning in @p eb
 * (the call still returns 0): the others are watched.
 * @return 0, GF_E_NOMEM or GF_E_SYSTEM
 */
int gf_watch_set_files(struct gf_watch *w, char *const *files, uint32_t n, struct gf_errbuf *eb);

/** Descriptor to poll for POLLIN; then call gf_watch_read(). */
int gf_watch_fd(const struct gf_watch *w);

/** Drain pending inotify events. @return number of events that concern watched files */
int gf_watch_read(struct gf_watch *w);

/** Milliseconds until a pending change is due (for a poll timeout), or -1 if none is pending. */
int gf_watch_timeout_ms(const struct gf_watch *w);

/**
 * 1 (and clear it) if a debounced change is due now, else 0. @p name, if not
 * NULL, receives the path of the last file changed (valid until the next call).
 */
int gf_watch_take(struct gf_watch *w, const char **name);

#endif
