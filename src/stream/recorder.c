#define _GNU_SOURCE /* sem_clockwait */
#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "log.h"

#define POLL_NS 20000000L /* the writer looks at the ring every 20 ms */

struct gf_recorder {
	char *path;
	SNDFILE *sf;
	struct gf_ring *ring;
	pthread_t thread;
	int thread_started;
	int sem_ready;
	sem_t wake;
	atomic_int stop;
	atomic_int active;
	_Atomic uint64_t errors;
	_Atomic uint64_t frames;
};

/* "DIR/NAME.EXT" -> "DIR/NAME.K.EXT" (the extension is kept so players know the file). */
static char *numbered(const char *path, unsigned k)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
		dot = path + strlen(path);
	size_t n = strlen(path) + 16;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%.*s.%u%s", (int)(dot - path), path, k, dot);
	return p;
}

/*
 * Create the recording as a new file: O_EXCL never truncates what is there
 * and never follows a symlink (nor opens a FIFO or device); if the name is
 * taken (an earlier recording, a stream restart, a reload), roll on to
 * NAME.1.EXT, NAME.2.EXT, ... Owner-only permissions: recordings of a room
 * are not for everyone who may use the audio devices.
 */
static int create_new(struct gf_recorder *r, const char *path, struct gf_errbuf *eb)
{
	for (unsigned k = 0; k < 10000; k++) {
		char *p = k ? numbered(path, k) : strdup(path);
		if (!p)
			return GF_E_NOMEM;
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			free(r->path);
			r->path = p;
			if (k)
				gf_notice("%s exists (recordings are never overwritten): recording to %s",
					  path, p);
			return fd;
		}
		int e = errno;
		free(p);
		if (e != EEXIST) {
			gf_errbuf_set(eb, "%s: cannot create recording: %s", path, strerror(e));
			return GF_E_IO;
		}
	}
	gf_errbuf_set(eb, "%s: cannot create recording: %s.1 to .9999 all exist", path, path);
	return GF_E_IO;
}

int gf_recorder_new(struct gf_recorder **out, const char *path, uint32_t rate, struct gf_ring *ring,
		    struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_recorder *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path)))
		goto nomem;
	r->ring = ring;
	if (sem_init(&r->wake, 0, 0) != 0)
		goto nomem;
	r->sem_ready = 1;
	SF_INFO info = {.samplerate = (int)rate,
			.channels = (int)gf_ring_channels(ring),
			.format = SF_FORMAT_RF64 | SF_FORMAT_FLOAT};
	int fd = create_new(r, path, eb);
	if (fd == GF_E_NOMEM)
		goto nomem;
	if (fd >= 0 && !(r->sf = sf_open_fd(fd, SFM_WRITE, &info, SF_TRUE))) /* closes fd on failure */
		gf_errbuf_set(eb, "%s: cannot create recording: %s", r->path, sf_strerror(NULL));
	if (!r->sf) {
		gf_recorder_free(r);
		return GF_E_IO;
	}
	/* A plain WAV unless the recording passes 4 GiB; header current after each write. */
	sf_command(r->sf, SFC_RF64_AUTO_DOWNGRADE, NULL, SF_TRUE);
	sf_command(r->sf, SFC_SET_UPDATE_HEADER_AUTO, NULL, SF_TRUE);
	atomic_store(&r->active, 1);
	*out = r;
	return 0;
nomem:
	gf_recorder_free(r);
	return GF_E_NOMEM;
}

const char *gf_recorder_path(const struct gf_recorder *r)
{
	return r->path;
}

/* Write one contiguous piece; on failure end the recording. */
static void write_piece(struct gf_recorder *r, const float *data, uint32_t frames)
{
	if (!r->sf || frames == 0)
		return;
	errno = 0;
	sf_count_t n = sf_writef_float(r->sf, data, frames);
	int e = errno;
	if (n > 0)
		atomic_fetch_add_explicit(&r->frames, (uint64_t)n, memory_order_relaxed);
	if (n == (sf_count_t)frames)
		return;
	atomic_store(&r->active, 0);
	atomic_fetch_add(&r->errors, 1);
	/* EFBIG: RLIMIT_FSIZE reached (the daemon ignores SIGXFSZ so that this is an error, not its end) */
	gf_err("recording to %s stopped after %llu frames: %s%s; audio continues", r->path,
	       (unsigned long long)atomic_load(&r->frames), sf_strerror(r->sf),
	       e == EFBIG ? " (the file reached this process's size limit, RLIMIT_FSIZE: ulimit -f, "
			    "LimitFSIZE=)"
			  : "");
	sf_close(r->sf); /* rewrites the header: the frames written stay a valid file */
	r->sf = NULL;
}

static void *writer_main(void *arg)
{
	struct gf_recorder *r = arg;
	for (;;) {
		/* Read the stop flag first: once it is set the producer is done,
		 * so an empty ring afterwards means everything was written. */
		int stopping = atomic_load(&r->stop);
		struct gf_ring_vec v[2];
		uint32_t n = gf_ring_read_vector(r->ring, v);
		if (n) {
			write_piece(r, v[0].data, v[0].frames);
			write_piece(r, v[1].data, v[1].frames);
			gf_ring_read_advance(r->ring, n);
			continue;
		}
		if (stopping)
			break;
		struct timespec ts = gf_deadline_in(CLOCK_MONOTONIC, POLL_NS);
		sem_clockwait(&r->wake, CLOCK_MONOTONIC, &ts);
	}
	if (r->sf) {
		if (sf_close(r->sf) != 0) {
			atomic_fetch_add(&r->errors, 1);
			gf_err("recording to %s: closing failed", r->path);
		}
		r->sf = NULL;
	}
	return NULL;
}

int gf_recorder_start(struct gf_recorder *r, struct gf_errbuf *eb)
{
	if (pthread_create(&r->thread, NULL, writer_main, r) != 0) {
		gf_errbuf_set(eb, "%s: cannot start the recording thread", r->path);
		return GF_E_SYSTEM;
	}
	r->thread_started = 1;
	return 0;
}

int gf_recorder_active(const struct gf_recorder *r)
{
	return atomic_load_explicit(&r->active, memory_order_relaxed);
}

void gf_recorder_kick(struct gf_recorder *r)
{
	/* sem_post never blocks; if the writer is busy the count just rises and
	 * its next wait returns at once, which is harmless. */
	sem_post(&r->wake);
}

void gf_recorder_stop(struct gf_recorder *r)
{
	if (!r)
		return;
	if (r->thread_started) {
		atomic_store(&r->stop, 1);
		sem_post(&r->wake);
		pthread_join(r->thread, NULL);
		r->thread_started = 0;
	}
	if (r->sf) { /* never started: close the empty file */
		sf_close(r->sf);
		r->sf = NULL;
	}
	atomic_store(&r->active, 0);
}

void gf_recorder_free(struct gf_recorder *r)
{
	if (!r)
		return;
	gf_recorder_stop(r);
	if (r->sem_ready)
		sem_destroy(&r->wake);
	free(r->path);
	free(r);
}

uint64_t gf_recorder_errors(const struct gf_recorder *r)
{
	return atomic_load_explicit(&r->errors, memory_order_relaxed);
}

uint64_t gf_recorder_frames(const struct gf_recorder *r)
{
	return atomic_load_explicit(&r->frames, memory_order_relaxed);
}
