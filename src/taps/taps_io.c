#include "taps_io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "safe_file.h"
#include "sound_trunc.h"

/* 16 Mi taps of about 25 characters each, with room for comments */
#define TEXT_MAX_BYTES (1 << 30)

/* A growing array of doubles. */
struct vec {
	double *v;
	uint32_t n, cap;
};

static int vec_push(struct vec *a, double x)
{
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 256;
		double *v = realloc(a->v, (size_t)cap * sizeof(double));
		if (!v)
			return GF_E_NOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* ---- text --------------------------------------------------------------- */

static int is_sep(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == ',' || ch == ';' || ch == '\f' || ch == '\v';
}

/* Parse one line (no newline); '#' starts a comment. */
static int parse_line(const char *s, size_t len, const char *name, unsigned line, struct vec *a,
		      struct gf_errbuf *eb)
{
	size_t i = 0;
	while (i < len) {
		if (is_sep(s[i])) {
			i++;
			continue;
		}
		if (s[i] == '#')
			break;
		size_t start = i;
		while (i < len && !is_sep(s[i]) && s[i] != '#')
			i++;
		/* Say where and what kind of problem, never what the file holds: the
		 * file may be anything readable (/etc/shadow) and the message goes to
		 * the journal and the status socket. */
		char tok[64];
		size_t tl = i - start;
		char *end = NULL;
		double x = 0.0;
		if (tl < sizeof(tok)) {
			memcpy(tok, s + start, tl);
			tok[tl] = '\0';
			x = strtod(tok, &end);
		}
		if (tl >= sizeof(tok) || end == tok || *end != '\0') {
			gf_errbuf_set(eb,
				      "%s:%u: column %zu: not a number (a taps file holds numbers separated "
				      "by spaces, "
				      "commas, semicolons or newlines; '#' starts a comment)",
				      name, line, start + 1);
			return GF_E_FORMAT;
		}
		if (!isfinite(x)) {
			gf_errbuf_set(eb, "%s:%u: '%s' is not a finite number", name, line, tok);
			return GF_E_NONFINITE;
		}
		if (a->n >= GF_TAPS_MAX) {
			gf_errbuf_set(eb, "%s:%u: more than %u taps", name, line, GF_TAPS_MAX);
			return GF_E_FORMAT;
		}
		if (vec_push(a, x))
			return GF_E_NOMEM;
	}
	return 0;
}

int gf_taps_parse_text(const char *buf, size_t len, const char *name, double **taps, uint32_t *n,
		       struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	struct vec a = {0};
	unsigned line = 1;
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;
		int r = parse_line(buf + pos, end - pos, name, line, &a, eb);
		if (r) {
			free(a.v);
			return r;
		}
		pos = end + 1;
		line++;
	}
	if (a.n == 0) {
		gf_errbuf_set(eb, "%s: no coefficients in the file", name);
		free(a.v);
		return GF_E_FORMAT;
	}
	*taps = a.v;
	*n = a.n;
	return 0;
}

int gf_taps_read_text(const char *path, double **taps, uint32_t *n, struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	/* regular files only (a FIFO or /dev/zero would never end), read up to
	 * the size fstat reports (/proc/self/pagemap says 0 and reads as empty) */
	char *buf = NULL;
	size_t len = 0;
	int r = gf_file_read_all(path, "filter file", TEXT_MAX_BYTES, &buf, &len, eb);
	if (!r)
		r = gf_taps_parse_text(buf, len, path, taps, n, eb);
	free(buf);
	return r;
}

/* ---- sound files (libsndfile) ------------------------------------------ */

int gf_taps_is_sound_file(const char *path)
{
	static const char *const exts[] = {"wav",  "wave", "w64", "rf64", "flac", "aif", "aiff",
					   "aifc", "caf",  "au",  "snd",  "ogg",  "oga", "opus"};
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return 0;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (strcasecmp(dot + 1, exts[i]) == 0)
			return 1;
	return 0;
}

static int check_select(const SF_INFO *info, const char *name, uint32_t rate, const struct gf_ir_select *sel,
			uint64_t *count, struct gf_errbuf *eb)
{
	if (rate && (uint32_t)info->samplerate != rate) {
		gf_errbuf_set(eb,
			      "%s: the impulse response is at %d Hz but the filter runs at %u Hz; "
			      "resample it to %u Hz (e.g. sox in.wav -r %u out.wav)",
			      name, info->samplerate, rate, rate, rate);
		return GF_E_RATE;
	}
	if (sel->channel >= (uint32_t)info->channels) {
		gf_errbuf_set(eb, "%s: channel %u, but the file has %d channel%s (0..%d)", name, sel->channel,
			      info->channels, info->channels == 1 ? "" : "s", info->channels - 1);
		return GF_E_CONFIG;
	}
	uint64_t frames = info->frames > 0 ? (uint64_t)info->frames : 0;
	if (sel->offset >= frames) {
		gf_errbuf_set(eb, "%s: offset %llu is not inside the file's %llu frames", name,
			      (unsigned long long)sel->offset, (unsigned long long)frames);
		return GF_E_CONFIG;
	}
	uint64_t want = sel->length ? sel->length : frames - sel->offset;
	if (sel->length && sel->offset + sel->length > frames) {
		gf_errbuf_set(eb, "%s: offset %llu + length %llu exceed the file's %llu frames", name,
			      (unsigned long long)sel->offset, (unsigned long long)sel->length,
			      (unsigned long long)frames);
		return GF_E_CONFIG;
	}
	if (want > GF_TAPS_MAX) {
		gf_errbuf_set(eb, "%s: %llu frames is more than the %u-tap limit; set length", name,
			      (unsigned long long)want, GF_TAPS_MAX);
		return GF_E_CONFIG;
	}
	*count = want;
	return 0;
}

/* Read @p count frames of one channel from the current position. */
static int read_channel(SNDFILE *sf, const SF_INFO *info, const char *name, uint32_t channel, uint64_t count,
			struct vec *a, struct gf_errbuf *eb)
{
	enum { CHUNK = 4096 };
	uint32_t chs = (uint32_t)info->channels;
	double *buf = malloc((size_t)CHUNK * chs * sizeof(double));
	if (!buf)
		return GF_E_NOMEM;
	int r = 0;
	while (!r && a->n < count) {
		uint64_t left = count - a->n;
		sf_count_t want = left < CHUNK ? (sf_count_t)left : CHUNK;
		sf_count_t got = sf_readf_double(sf, buf, want);
		if (got <= 0) {
			gf_errbuf_set(eb, "%s: the file ends after %u of %llu frames", name, a->n,
				      (unsigned long long)count);
			r = GF_E_FORMAT;
			break;
		}
		for (sf_count_t i = 0; i < got && !r; i++) {
			double x = buf[(size_t)i * chs + channel];
			if (!isfinite(x)) {
				gf_errbuf_set(eb, "%s: sample %u of channel %u is not finite", name, a->n,
					      channel);
				r = GF_E_NONFINITE;
			} else {
				r = vec_push(a, x);
			}
		}
	}
	free(buf);
	return r;
}

/*
 * A file cut short (an interrupted copy) still opens, and libsndfile would
 * read the frames that are there: refused, since an impulse response missing
 * its tail is a different filter, and a reload must keep the running one.
 */
static int check_truncated(SNDFILE *sf, const SF_INFO *info, const char *name, struct gf_errbuf *eb)
{
	uint64_t header;
	if (!gf_sound_truncated(sf, info, &header))
		return 0;
	if (header)
		gf_errbuf_set(eb, "%s: truncated: header says %llu frames, %lld read (an interrupted copy?)",
			      name, (unsigned long long)header, (long long)info->frames);
	else
		gf_errbuf_set(eb,
			      "%s: truncated: the file ends before its header says, after %lld frames (an "
			      "interrupted copy?)",
			      name, (long long)info->frames);
	return GF_E_FORMAT;
}

static int read_sf(SNDFILE *sf, SF_INFO *info, const char *name, uint32_t rate,
		   const struct gf_ir_select *sel, double **taps, uint32_t *n, uint32_t *file_rate,
		   struct gf_errbuf *eb)
{
	uint64_t count;
	struct vec a = {0};
	if (file_rate)
		*file_rate = (uint32_t)info->samplerate;
	int r = check_truncated(sf, info, name, eb);
	if (!r)
		r = check_select(info, name, rate, sel, &count, eb);
	if (r)
		return r;
	if (sel->offset && sf_seek(sf, (sf_count_t)sel->offset, SEEK_SET) < 0) {
		gf_errbuf_set(eb, "%s: cannot seek to frame %llu: %s", name, (unsigned long long)sel->offset,
			      sf_strerror(sf));
		return GF_E_FORMAT;
	}
	if ((r = read_channel(sf, info, name, sel->channel, count, &a, eb))) {
		free(a.v);
		return r;
	}
	*taps = a.v;
	*n = a.n;
	return 0;
}

/*
 * libsndfile 1.2 (with libvorbis) leaks about 5.8 KB inside sf_open on every
 * failed open of a malformed Ogg file (vorbis_info_init's allocation; the
 * handle that would free it is never returned, so no call order avoids it:
 * sf_open, sf_open_fd and sf_open_virtual all do it). A daemon reloading the
 * same broken file would leak that, mlocked, on each reload. So a failed Ogg
 * file is remembered by (device, inode, size, mtime) and not opened again
 * until it changes, and after OGG_FAILS_MAX distinct failures no further Ogg
 * file is opened: at most OGG_FAILS_MAX x 5.8 KB per process. Control thread.
 */
#define OGG_FAILS_MAX 64

struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};
/* Builds may run on two threads at once (the daemon's build thread, its control thread). */
static pthread_mutex_t ogg_fails_lock = PTHREAD_MUTEX_INITIALIZER;
static struct file_id ogg_fails[OGG_FAILS_MAX];
static unsigned n_ogg_fails;

static int same_id(const struct file_id *a, const struct stat *st)
{
	return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
	       a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* 1: @p fd is an Ogg file that must not be handed to libsndfile (message in @p eb). */
static int ogg_refused(int fd, const char *path, int *is_ogg, struct stat *st, struct gf_errbuf *eb)
{
	char magic[4];
	*is_ogg = fstat(fd, st) == 0 && pread(fd, magic, 4, 0) == 4 && memcmp(magic, "OggS", 4) == 0;
	if (!*is_ogg)
		return 0;
	pthread_mutex_lock(&ogg_fails_lock);
	unsigned n = n_ogg_fails, seen = 0;
	for (unsigned i = 0; i < n && !seen; i++)
		seen = same_id(&ogg_fails[i], st);
	pthread_mutex_unlock(&ogg_fails_lock);
	if (seen) {
		gf_errbuf_set(eb,
			      "%s: this Ogg file could not be read before; it is not opened again "
			      "until it changes (libsndfile leaks memory on each failed Ogg open)",
			      path);
		return 1;
	}
	if (n < OGG_FAILS_MAX)
		return 0;
	gf_errbuf_set(eb,
		      "%s: %u malformed Ogg files failed to open in this process; no more Ogg files "
		      "are opened (each failure leaks memory inside libsndfile): restart gpufir",
		      path, n);
	return 1;
}

static void ogg_failed(const struct stat *st)
{
	pthread_mutex_lock(&ogg_fails_lock);
	if (n_ogg_fails < OGG_FAILS_MAX)
		ogg_fails[n_ogg_fails++] = (struct file_id){st->st_dev, st->st_ino, st->st_size, st->st_mtim};
	pthread_mutex_unlock(&ogg_fails_lock);
}

int gf_taps_read_wav(const char *path, uint32_t rate, const struct gf_ir_select *sel, double **taps,
		     uint32_t *n, uint32_t *file_rate, struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	SF_INFO info = {0};
	int fd = gf_file_open_read(path, "filter file", 0, eb);
	if (fd < 0)
		return fd;
	int is_ogg;
	struct stat st;
	if (ogg_refused(fd, path, &is_ogg, &st, eb)) {
		close(fd);
		return GF_E_FORMAT;
	}
	SNDFILE *sf = sf_open_fd(fd, SFM_READ, &info, SF_TRUE); /* closes fd, even on failure */
	if (!sf) {
		if (is_ogg)
			ogg_failed(&st);
		gf_errbuf_set(eb, "%s: not a sound file libsndfile can read: %s", path, sf_strerror(NULL));
		return GF_E_FORMAT;
	}
	int r = read_sf(sf, &info, path, rate, sel, taps, n, file_rate, eb);
	sf_close(sf);
	return r;
}

/* ---- libsndfile virtual I/O over a memory image ------------------------ */

struct mem {
	const unsigned char *p;
	sf_count_t size, pos;
};

static sf_count_t mem_len(void *u)
{
	return ((struct mem *)u)->size;
}

static sf_count_t mem_seek(sf_count_t off, int whence, void *u)
{
	struct mem *m = u;
	sf_count_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
	sf_count_t pos = base + off;
	if (pos < 0 || pos > m->size)
		return -1;
	m->pos = pos;
	return pos;
}

static sf_count_t mem_read(void *dst, sf_count_t count, void *u)
{
	struct mem *m = u;
	sf_count_t left = m->size - m->pos;
	if (count > left)
		count = left;
	if (count > 0)
		memcpy(dst, m->p + m->pos, (size_t)count);
	m->pos += count > 0 ? count : 0;
	return count > 0 ? count : 0;
}

static sf_count_t mem_write(const void *src, sf_count_t count, void *u)
{
	return 0;
}

static sf_count_t mem_tell(void *u)
{
	return ((struct mem *)u)->pos;
}

int gf_taps_read_wav_mem(const void *data, size_t size, const char *name, uint32_t rate,
			 const struct gf_ir_select *sel, double **taps, uint32_t *n, uint32_t *file_rate,
			 struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	SF_VIRTUAL_IO io = {mem_len, mem_seek, mem_read, mem_write, mem_tell};
	struct mem m = {data, (sf_count_t)size, 0};
	SF_INFO info = {0};
	SNDFILE *sf = sf_open_virtual(&io, SFM_READ, &info, &m);
	if (!sf) {
		gf_errbuf_set(eb, "%s: not a sound file libsndfile can read: %s", name, sf_strerror(NULL));
		return GF_E_FORMAT;
	}
	int r = read_sf(sf, &info, name, rate, sel, taps, n, file_rate, eb);
	sf_close(sf);
	return r;
}
