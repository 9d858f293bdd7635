/*
 * Offline filtering: reader thread -> engine (calling thread) -> writer thread.
 *
 * Chunks circulate through three FIFOs under one mutex:
 *   free --reader decodes--> decoded --engine filters in place--> filtered --writer encodes--> free
 * so decoding, filtering and encoding of neighbouring chunks overlap, and memory
 * is GF_OFFLINE_CHUNKS chunks whatever the file's length. This is not the RT
 * path: a mutex and a condition variable are the simplest correct choice.
 */
#define _GNU_SOURCE /* asprintf */
#include "offline.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "log.h"
#include "progress.h"

#define MAX_CHUNK_BYTES (8u << 20) /* many-channel files get shorter chunks */
#define STOP_POLL_NS 100000000L	   /* the engine thread looks at o->stop every 100 ms */

/* ---- formats ------------------------------------------------------------ */

static const struct {
	const char *name;
	int subtype;
} subtypes[] = {
	{"PCM_16", SF_FORMAT_PCM_16},
	{"PCM_24", SF_FORMAT_PCM_24},
	{"PCM_32", SF_FORMAT_PCM_32},
	{"FLOAT", SF_FORMAT_FLOAT},
	{"DOUBLE", SF_FORMAT_DOUBLE},
	{"PCM_S8", SF_FORMAT_PCM_S8},
	{"PCM_U8", SF_FORMAT_PCM_U8},
	{"ULAW", SF_FORMAT_ULAW},
	{"ALAW", SF_FORMAT_ALAW},
	{"IMA_ADPCM", SF_FORMAT_IMA_ADPCM},
	{"MS_ADPCM", SF_FORMAT_MS_ADPCM},
	{"GSM610", SF_FORMAT_GSM610},
	{"VORBIS", SF_FORMAT_VORBIS},
	{"OPUS", SF_FORMAT_OPUS},
	{"ALAC_16", SF_FORMAT_ALAC_16},
	{"ALAC_20", SF_FORMAT_ALAC_20},
	{"ALAC_24", SF_FORMAT_ALAC_24},
	{"ALAC_32", SF_FORMAT_ALAC_32},
	{"MPEG_LAYER_III", SF_FORMAT_MPEG_LAYER_III},
};

int gf_offline_parse_format(const char *name, int *subtype)
{
	for (size_t i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++) {
		if (strcasecmp(name, subtypes[i].name) == 0) {
			*subtype = subtypes[i].subtype;
			return 0;
		}
	}
	return GF_E_INVAL;
}

const char *gf_offline_format_name(int subtype)
{
	for (size_t i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++) {
		if (subtypes[i].subtype == (subtype & SF_FORMAT_SUBMASK))
			return subtypes[i].name;
	}
	return "unknown";
}

const char *gf_offline_format_list(void)
{
	return "PCM_16, PCM_24, PCM_32, FLOAT, DOUBLE, PCM_S8, PCM_U8, ULAW, ALAW, IMA_ADPCM, "
	       "MS_ADPCM, GSM610, VORBIS, OPUS, ALAC_16, ALAC_20, ALAC_24, ALAC_32, MPEG_LAYER_III";
}

/* Float subtypes store values beyond +-1.0; every other one clips them. */
static int subtype_clips(int format)
{
	int s = format & SF_FORMAT_SUBMASK;
	return s != SF_FORMAT_FLOAT && s != SF_FORMAT_DOUBLE;
}

/* libsndfile's extension for a major format ("wav", "flac", "oga"), or "". */
static const char *major_extension(int major)
{
	int count = 0;
	sf_command(NULL, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof(count));
	for (int i = 0; i < count; i++) {
		SF_FORMAT_INFO info = {.format = i};
		if (sf_command(NULL, SFC_GET_FORMAT_MAJOR, &info, sizeof(info)) == 0 && info.format == major)
			return info.extension ? info.extension : "";
	}
	return "";
}

static const char *major_name(int major)
{
	SF_FORMAT_INFO info = {.format = major};
	if (sf_command(NULL, SFC_GET_FORMAT_INFO, &info, sizeof(info)) == 0 && info.name)
		return info.name;
	return "unknown container";
}

/* Major format named by OUT's extension, 0 if none or unknown. */
static int major_for_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash + 1 : path, '.');
	if (!dot || !dot[1])
		return 0;
	const char *ext = dot + 1;
	if (strcasecmp(ext, "aif") == 0)
		ext = "aiff";
	else if (strcasecmp(ext, "ogg") == 0 || strcasecmp(ext, "opus") == 0)
		ext = "oga";
	int count = 0;
	sf_command(NULL, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof(count));
	for (int i = 0; i < count; i++) {
		SF_FORMAT_INFO info = {.format = i};
		if (sf_command(NULL, SFC_GET_FORMAT_MAJOR, &info, sizeof(info)) == 0 && info.extension &&
		    strcasecmp(info.extension, ext) == 0)
			return info.format;
	}
	return 0;
}

/*
 * OUT's format: IN's container unless OUT's extension names another one; IN's
 * sample format unless --format names one. If a changed container cannot hold
 * IN's sample format, fall back to the best one it can (with a warning).
 */
static int choose_output_format(const SF_INFO *in, const struct gf_offline_opts *o, SF_INFO *out,
				struct gf_errbuf *eb)
{
	int major = in->format & SF_FORMAT_TYPEMASK;
	int endian = in->format & SF_FORMAT_ENDMASK;
	int ext_major = major_for_path(o->output);
	if (ext_major && strcasecmp(major_extension(ext_major), major_extension(major)) != 0) {
		major = ext_major;
		endian = 0;
	}
	*out = (SF_INFO){.samplerate = in->samplerate, .channels = in->channels};
	int subtype = o->format_subtype ? o->format_subtype : (in->format & SF_FORMAT_SUBMASK);
	out->format = major | subtype | endian;
	if (sf_format_check(out))
		return 0;
	if (o->format_subtype) {
		gf_errbuf_set(eb,
			      "%s: the %s container cannot hold %s samples (%d channels, %d Hz); "
			      "choose another --format",
			      o->output, major_name(major), gf_offline_format_name(subtype), in->channels,
			      in->samplerate);
		return GF_E_INVAL;
	}
	static const int fallback[] = {SF_FORMAT_PCM_24, SF_FORMAT_PCM_16, SF_FORMAT_FLOAT, SF_FORMAT_VORBIS,
				       SF_FORMAT_MPEG_LAYER_III};
	for (size_t i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++) {
		out->format = major | fallback[i];
		if (sf_format_check(out)) {
			gf_warn("%s: the %s container cannot hold %s samples; writing %s (--format chooses)",
				o->output, major_name(major), gf_offline_format_name(subtype),
				gf_offline_format_name(fallback[i]));
			return 0;
		}
	}
	gf_errbuf_set(eb, "%s: cannot write a %s file with %d channels at %d Hz", o->output,
		      major_name(major), in->channels, in->samplerate);
	return GF_E_INVAL;
}

/* ---- paths -------------------------------------------------------------- */

/* Refuse OUT == IN by name, by link or by inode, and OUT being a directory. */
static int check_paths(const char *in, const char *out, struct gf_errbuf *eb)
{
	if (strcmp(out, "-") == 0) {
		gf_errbuf_set(eb, "cannot write to standard output (OUT is replaced atomically): "
				  "give a file name");
		return GF_E_INVAL;
	}
	struct stat si, so;
	int in_ok = stat(in, &si) == 0;
	int out_ok = stat(out, &so) == 0;
	char *rin = realpath(in, NULL), *rout = realpath(out, NULL);
	int same = strcmp(in, out) == 0 || (rin && rout && strcmp(rin, rout) == 0) ||
		   (in_ok && out_ok && si.st_dev == so.st_dev && si.st_ino == so.st_ino);
	free(rin);
	free(rout);
	if (same) {
		gf_errbuf_set(eb,
			      "output %s is the input file: choose another output "
			      "(gpufir never overwrites its input)",
			      out);
		return GF_E_INVAL;
	}
	if (out_ok && S_ISDIR(so.st_mode)) {
		gf_errbuf_set(eb, "output %s is a directory: give a file name", out);
		return GF_E_IO;
	}
	return 0;
}

/*
 * Create the temporary output beside OUT (same filesystem, so the final rename
 * is atomic), with the permissions a plain new file would get.
 */
static int open_temp(const char *out, char **tmp_path, int *fd, struct gf_errbuf *eb)
{
	char *d = strdup(out), *b = strdup(out);
	int err = GF_E_NOMEM;
	*tmp_path = NULL;
	*fd = -1;
	if (!d || !b)
		goto done;
	const char *dir = dirname(d), *base = basename(b);
	if (asprintf(tmp_path, "%s/.%.200s.gpufir-XXXXXX", dir, base) < 0) {
		*tmp_path = NULL;
		goto done;
	}
	*fd = mkstemp(*tmp_path);
	if (*fd < 0) {
		gf_errbuf_set(eb, "cannot create the output in directory %s: %s", dir, strerror(errno));
		free(*tmp_path);
		*tmp_path = NULL;
		err = GF_E_IO;
		goto done;
	}
	mode_t mask = umask(0); /* read the umask: single-threaded here */
	umask(mask);
	if (fchmod(*fd, 0666 & ~mask) != 0)
		gf_debug("fchmod %s: %s", *tmp_path, strerror(errno));
	err = 0;
done:
	free(d);
	free(b);
	return err;
}

static void copy_strings(SNDFILE *in, SNDFILE *out)
{
	for (int t = SF_STR_FIRST; t <= SF_STR_LAST; t++) {
		const char *s = sf_get_string(in, t);
		if (s)
			sf_set_string(out, t, s);
	}
}

/* ---- the pipeline ------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

struct fifo {
	uint32_t idx[GF_OFFLINE_CHUNKS];
	uint32_t head, count;
};

struct chunk {
	float *buf;
	uint32_t frames;
	int pinned;
};

struct pipeline {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk chunk[GF_OFFLINE_CHUNKS];
	struct fifo free_q, decoded_q, filtered_q;
	int reader_done; /* no more decoded chunks will come */
	int engine_done; /* no more filtered chunks will come */
	int failed;	 /* first error code; everyone stops */
	struct gf_errbuf eb;

	const struct gf_offline_opts *o;
	SNDFILE *in, *out;
	uint32_t channels, chunk_frames;
	int clips; /* OUT's format clips beyond +-1.0 */
	uint64_t frames_read, frames_filtered, frames_written, clipped;
	float peak;
	double busy_ms[3]; /* reader, engine, writer: time spent working (debug log) */
};

static void fifo_push(struct fifo *q, uint32_t i)
{
	q->idx[(q->head + q->count++) % GF_OFFLINE_CHUNKS] = i;
}

static uint32_t fifo_pop(struct fifo *q)
{
	uint32_t i = q->idx[q->head];
	q->head = (q->head + 1) % GF_OFFLINE_CHUNKS;
	q->count--;
	return i;
}

/* Record the first failure and wake everyone. Caller holds mu. */
static void fail_locked(struct pipeline *p, int err, const struct gf_errbuf *eb)
{
	if (!p->failed) {
		p->failed = err;
		p->eb = *eb;
	}
	pthread_cond_broadcast(&p->cv);
}

static void fail(struct pipeline *p, int err, const struct gf_errbuf *eb)
{
	pthread_mutex_lock(&p->mu);
	fail_locked(p, err, eb);
	pthread_mutex_unlock(&p->mu);
}

static int stop_requested(const struct pipeline *p)
{
	return p->o->stop && atomic_load(p->o->stop);
}

/*
 * Take a chunk index from @p q, waiting while it is empty.
 * @return 1 with *idx set, 0 when @p q is empty and *done says none will come,
 * -1 when the pipeline failed. The engine thread also polls the stop flag.
 */
static int take(struct pipeline *p, struct fifo *q, const int *done, int poll_stop, uint32_t *idx)
{
	int r;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (poll_stop && stop_requested(p)) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "interrupted: %s was not written", p->o->output);
			fail_locked(p, GF_E_INTERRUPTED, &eb);
		}
		if (p->failed) {
			r = -1;
			break;
		}
		if (q->count) {
			*idx = fifo_pop(q);
			r = 1;
			break;
		}
		if (done && *done) {
			r = 0;
			break;
		}
		if (poll_stop) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += STOP_POLL_NS;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		} else {
			pthread_cond_wait(&p->cv, &p->mu);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return r;
}

static void give(struct pipeline *p, struct fifo *q, uint32_t idx)
{
	pthread_mutex_lock(&p->mu);
	fifo_push(q, idx);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void set_done(struct pipeline *p, int *flag)
{
	pthread_mutex_lock(&p->mu);
	*flag = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void *reader_main(void *arg)
{
	struct pipeline *p = arg;
	uint32_t i;
	while (take(p, &p->free_q, NULL, 0, &i) == 1) {
		struct chunk *c = &p->chunk[i];
		double t0 = now_ms();
		sf_count_t n = sf_readf_float(p->in, c->buf, p->chunk_frames);
		p->busy_ms[0] += now_ms() - t0;
		if (sf_error(p->in) != SF_ERR_NO_ERROR) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "%s: cannot decode: %s", p->o->input, sf_strerror(p->in));
			give(p, &p->free_q, i);
			fail(p, GF_E_FORMAT, &eb);
			break;
		}
		if (n <= 0) {
			give(p, &p->free_q, i);
			break;
		}
		c->frames = (uint32_t)n;
		p->frames_read += (uint64_t)n;
		give(p, &p->decoded_q, i);
	}
	set_done(p, &p->reader_done);
	return NULL;
}

/* Count samples the output format will clip, and the peak (writer thread). */
static void measure(struct pipeline *p, const float *x, size_t n)
{
	/* On the bits: |x| of a float orders like its bit pattern with the sign
	 * cleared, and integer max/compare vectorize where a float max (NaN
	 * rules) does not: 4x faster, and the writer is the pipeline's slowest stage. */
	int32_t top = 0, over = 0; /* a chunk holds far fewer than 2^31 samples */
	for (size_t k = 0; k < n; k++) {
		int32_t u;
		memcpy(&u, &x[k], sizeof(u));
		u &= 0x7fffffff;
		u = u > 0x7f800000 ? 0 : u; /* NaN: ignored, as a float comparison would */
		top = u > top ? u : top;
		over += u > 0x3f800000; /* |x| > 1.0f */
	}
	float peak;
	memcpy(&peak, &top, sizeof(peak));
	if (peak > p->peak)
		p->peak = peak;
	if (p->clips)
		p->clipped += (uint32_t)over;
}

static void *writer_main(void *arg)
{
	struct pipeline *p = arg;
	uint32_t i;
	while (take(p, &p->filtered_q, &p->engine_done, 0, &i) == 1) {
		struct chunk *c = &p->chunk[i];
		double t0 = now_ms();
		measure(p, c->buf, (size_t)c->frames * p->channels);
		sf_count_t n = sf_writef_float(p->out, c->buf, c->frames);
		p->busy_ms[2] += now_ms() - t0;
		if (n != (sf_count_t)c->frames) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "%s: write failed: %s", p->o->output, sf_strerror(p->out));
			give(p, &p->free_q, i);
			fail(p, GF_E_IO, &eb);
			break;
		}
		p->frames_written += c->frames;
		give(p, &p->free_q, i);
	}
	return NULL;
}

static void engine_failed(struct pipeline *p, uint32_t i, int err)
{
	struct gf_errbuf eb;
	gf_errbuf_set(&eb, "filtering failed at frame %llu: %s", (unsigned long long)p->frames_filtered,
		      gf_strerror(err));
	give(p, &p->free_q, i);
	fail(p, err, &eb);
}

/*
 * Filter one chunk in place (@p flush: the tail, from silence). If the backend
 * fails (a GPU lost mid-file), fall back to the CPU and redo the chunk from
 * the engine's copy of its input: the output stays exact. The engine thread
 * is also the engine's control thread, so it may reap() here.
 */
static int filter_chunk(struct gf_engine *e, float *buf, uint32_t frames, int flush)
{
	int err = flush ? gf_engine_flush(e, buf, frames) : gf_engine_process(e, buf, buf, frames);
	if (!err || !gf_engine_failed(e))
		return err;
	gf_engine_reap(e);
	return gf_engine_retry(e, buf, frames) == 0 ? 0 : err;
}

/* Engine thread (the caller's): filter decoded chunks in place, then the tail. */
static void run_engine(struct pipeline *p, struct gf_engine *e, struct gf_progress *prog)
{
	uint32_t i;
	int r;
	while ((r = take(p, &p->decoded_q, &p->reader_done, 1, &i)) == 1) {
		struct chunk *c = &p->chunk[i];
		double t0 = now_ms();
		int err = filter_chunk(e, c->buf, c->frames, 0);
		p->busy_ms[1] += now_ms() - t0;
		if (err) {
			engine_failed(p, i, err);
			return;
		}
		p->frames_filtered += c->frames;
		give(p, &p->filtered_q, i);
		gf_progress_update(prog, p->frames_filtered);
	}
	if (r < 0)
		return;
	/* --tail: the filter's ring-out, taps-1 frames of input silence. */
	uint64_t tail = p->o->tail ? gf_engine_taps(e) - 1u : 0;
	while (tail > 0 && take(p, &p->free_q, NULL, 1, &i) == 1) {
		struct chunk *c = &p->chunk[i];
		c->frames = tail < p->chunk_frames ? (uint32_t)tail : p->chunk_frames;
		int err = filter_chunk(e, c->buf, c->frames, 1); /* frames <= max_block: one call */
		if (err) {
			engine_failed(p, i, err);
			return;
		}
		tail -= c->frames;
		give(p, &p->filtered_q, i);
	}
}

static void pipeline_free(struct pipeline *p)
{
	for (uint32_t i = 0; i < GF_OFFLINE_CHUNKS; i++) {
		if (p->chunk[i].pinned)
			gf_cuda_unpin(p->chunk[i].buf);
		free(p->chunk[i].buf);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

static int pipeline_init(struct pipeline *p, const struct gf_offline_opts *o, uint32_t channels,
			 uint32_t chunk_frames, int pin)
{
	memset(p, 0, sizeof(*p));
	p->o = o;
	p->channels = channels;
	p->chunk_frames = chunk_frames;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	size_t bytes = (size_t)chunk_frames * channels * sizeof(float);
	for (uint32_t i = 0; i < GF_OFFLINE_CHUNKS; i++) {
		void *mem = NULL;
		if (posix_memalign(&mem, 4096, bytes) != 0)
			return GF_E_NOMEM;
		p->chunk[i].buf = mem;
		/*
		 * Pinned chunks let the CUDA backend DMA directly; unpinned ones work
		 * too. The CPU backend skips this: pinning would create a CUDA context.
		 */
		int err = pin ? gf_cuda_pin(mem, bytes) : GF_E_UNSUPPORTED;
		p->chunk[i].pinned = err == 0;
		if (err && err != GF_E_UNSUPPORTED)
			gf_debug("chunk %u not pinned: %s", i, gf_strerror(err));
		fifo_push(&p->free_q, i);
	}
	return 0;
}

/* Run the three stages; joins both threads before returning. */
static int pipeline_run(struct pipeline *p, struct gf_engine *e, struct gf_progress *prog,
			struct gf_errbuf *eb)
{
	pthread_t reader, writer;
	if (pthread_create(&reader, NULL, reader_main, p) != 0) {
		gf_errbuf_set(eb, "cannot start the reader thread");
		return GF_E_SYSTEM;
	}
	if (pthread_create(&writer, NULL, writer_main, p) != 0) {
		gf_errbuf_set(eb, "cannot start the writer thread");
		fail(p, GF_E_SYSTEM, eb);
		pthread_join(reader, NULL);
		*eb = p->eb;
		return p->failed;
	}
	run_engine(p, e, prog);
	set_done(p, &p->engine_done);
	pthread_join(reader, NULL);
	pthread_join(writer, NULL);
	if (p->failed)
		*eb = p->eb;
	return p->failed;
}

/* ---- the run ------------------------------------------------------------ */

struct run {
	struct gf_config *cfg;
	struct gf_filter_set *fs;
	struct gf_engine *engine;
	struct gf_progress *prog;
	SNDFILE *in, *out;
	SF_INFO in_info, out_info;
	char *tmp_path;
	int tmp_fd;
	uint32_t chunk_frames;
};

/*
 * A file cut short (an interrupted copy or download) still opens: libsndfile
 * reads the frames that are there and notes the shortfall in its log as
 * "data : N (should be M)" (WAV; "SSND" in AIFF). Filtering what is there is
 * what the user can use; say so, since the header promised more.
 */
static void warn_if_truncated(SNDFILE *f, const char *path, sf_count_t frames)
{
	char log[4096] = "";
	sf_command(f, SFC_GET_LOG_INFO, log, sizeof(log));
	for (char *save = NULL, *line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((strncmp(line, "data", 4) == 0 || strncmp(line, "SSND", 4) == 0) &&
		    strstr(line, "should be")) {
			gf_warn("%s: the file ends before its header says (truncated?): filtering the %lld "
				"frames it holds",
				path, (long long)frames);
			return;
		}
	}
}

static int open_input(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	r->in = sf_open(o->input, SFM_READ, &r->in_info);
	if (!r->in) {
		gf_errbuf_set(eb, "cannot read %s: %s", o->input, sf_strerror(NULL));
		return GF_E_IO;
	}
	if (r->in_info.frames <= 0) {
		gf_errbuf_set(eb, "%s: no audio frames in the file (empty or truncated)", o->input);
		return GF_E_FORMAT;
	}
	if (r->in_info.channels <= 0 || r->in_info.samplerate <= 0) {
		gf_errbuf_set(eb, "%s: invalid header (%d channels, %d Hz)", o->input, r->in_info.channels,
			      r->in_info.samplerate);
		return GF_E_FORMAT;
	}
	if (r->in_info.samplerate < (int)GF_RATE_MIN || r->in_info.samplerate > (int)GF_RATE_MAX) {
		gf_errbuf_set(eb, "%s: sample rate %d Hz is not supported (%u to %u Hz): resample it first",
			      o->input, r->in_info.samplerate, GF_RATE_MIN, GF_RATE_MAX);
		return GF_E_FORMAT;
	}
	warn_if_truncated(r->in, o->input, r->in_info.frames);
	return 0;
}

/* Config and filters at the file's rate and channel count: any failure is a config error. */
static int build_filters(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	int err = gf_config_load_source(&o->src, &r->cfg, eb);
	if (err)
		return err == GF_E_NOMEM ? err : GF_E_CONFIG;
	if (r->cfg->backend != GF_BACKEND_CPU)
		gf_cuda_prewarm(r->cfg->gpu_index); /* CUDA starts while the taps are read */
	if (!o->log_level_set)
		gf_log_set_level(r->cfg->log_level);
	uint32_t rate = (uint32_t)r->in_info.samplerate, ch = (uint32_t)r->in_info.channels;
	if (r->cfg->sample_rate && r->cfg->sample_rate != rate)
		gf_warn("%s sets sample_rate = %u Hz but %s is %u Hz: designing the filters at "
			"%u Hz, the file's rate (WAV impulse responses must match it)",
			r->cfg->path ? r->cfg->path : "the configuration", r->cfg->sample_rate, o->input,
			rate, rate);
	err = gf_config_build(r->cfg, rate, ch, &r->fs, eb);
	if (err)
		return err == GF_E_NOMEM ? err : GF_E_CONFIG;
	return 0;
}

static int make_engine(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	struct gf_engine_params ep = {
		.backend = r->cfg->backend,
		.algo = r->cfg->algo,
		.channels = (uint32_t)r->in_info.channels,
		.max_block = r->chunk_frames,
		.gpu_index = r->cfg->gpu_index,
		.retry = 1, /* a backend failing mid-file: redo the chunk on the CPU (filter_chunk) */
	};
	struct gf_errbuf eeb = {{0}};
	int err = gf_engine_new(&r->engine, &ep, r->fs, &eeb);
	if (err)
		gf_errbuf_set(eb, "cannot start the engine: %s", eeb.msg[0] ? eeb.msg : gf_strerror(err));
	return err;
}

static int open_output(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	int err = choose_output_format(&r->in_info, o, &r->out_info, eb);
	if (!err)
		err = open_temp(o->output, &r->tmp_path, &r->tmp_fd, eb);
	if (err)
		return err;
	r->out = sf_open_fd(r->tmp_fd, SFM_WRITE, &r->out_info, SF_FALSE);
	if (!r->out) {
		gf_errbuf_set(eb, "cannot write %s: %s", o->output, sf_strerror(NULL));
		return GF_E_IO;
	}
	if (subtype_clips(r->out_info.format))
		sf_command(r->out, SFC_SET_CLIPPING, NULL, SF_TRUE);
	copy_strings(r->in, r->out);
	return 0;
}

static uint32_t pick_chunk_frames(const struct gf_offline_opts *o, uint32_t channels)
{
	uint32_t f = o->chunk_frames ? o->chunk_frames : GF_OFFLINE_CHUNK_FRAMES;
	uint32_t cap = MAX_CHUNK_BYTES / (channels * (uint32_t)sizeof(float));
	if (!o->chunk_frames && f > cap)
		f = cap > 1024 ? cap : 1024;
	return f;
}

static void report(const struct run *r, const struct pipeline *p, const struct gf_offline_opts *o)
{
	double secs = gf_progress_elapsed(r->prog);
	double audio = (double)p->frames_read / r->in_info.samplerate;
	double peak_db = p->peak > 0.0f ? 20.0 * log10(p->peak) : -INFINITY;
	if (p->clipped)
		gf_warn("%llu samples clipped (peak %+.2f dBFS): lower the gain in the configuration "
			"or write --format FLOAT",
			(unsigned long long)p->clipped, peak_db);
	else if (p->peak > 1.0f)
		gf_warn("peak %+.2f dBFS is above full scale (kept by the float output; integer "
			"formats would clip)",
			peak_db);
	struct gf_engine_stats st;
	gf_engine_get_stats(r->engine, &st);
	if (st.nonfinite_blocks)
		gf_warn("%llu blocks were muted because the filter produced NaN/Inf",
			(unsigned long long)st.nonfinite_blocks);
	gf_info("%s -> %s: %llu frames (%.2f s, %d ch, %d Hz, %s %s) in %.3f s, %.1fx realtime; "
		"%s/%s, %u taps; peak %.1f dBFS",
		o->input, o->output, (unsigned long long)p->frames_written, audio, r->in_info.channels,
		r->in_info.samplerate, major_name(r->out_info.format & SF_FORMAT_TYPEMASK),
		gf_offline_format_name(r->out_info.format), secs, secs > 0.0 ? audio / secs : 0.0,
		gf_engine_backend_name(r->engine), gf_engine_algo_name(r->engine), gf_engine_taps(r->engine),
		peak_db);
}

static int stopped(const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	if (o->stop && atomic_load(o->stop)) {
		gf_errbuf_set(eb, "interrupted: %s was not written", o->output);
		return GF_E_INTERRUPTED;
	}
	return 0;
}

/* Close OUT and move it into place, or remove the temporary file. */
static int finish_output(struct run *r, const struct gf_offline_opts *o, int err, struct gf_errbuf *eb)
{
	if (r->out) {
		int rc = sf_close(r->out);
		r->out = NULL;
		if (rc && !err) {
			gf_errbuf_set(eb, "%s: write failed: %s", o->output, sf_error_number(rc));
			err = GF_E_IO;
		}
	}
	if (r->tmp_fd >= 0) {
		if (close(r->tmp_fd) != 0 && !err) {
			gf_errbuf_set(eb, "%s: write failed: %s", o->output, strerror(errno));
			err = GF_E_IO;
		}
		r->tmp_fd = -1;
	}
	if (!r->tmp_path)
		return err;
	if (!err && rename(r->tmp_path, o->output) != 0) {
		gf_errbuf_set(eb, "cannot rename the finished output to %s: %s", o->output, strerror(errno));
		err = GF_E_IO;
	}
	if (err)
		unlink(r->tmp_path);
	free(r->tmp_path);
	r->tmp_path = NULL;
	return err;
}

static int prepare(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	double t[4] = {now_ms(), 0.0, 0.0, 0.0};
	int err = check_paths(o->input, o->output, eb);
	if (!err)
		err = open_input(r, o, eb);
	t[1] = now_ms();
	if (!err)
		err = build_filters(r, o, eb);
	t[2] = now_ms();
	if (!err) {
		r->chunk_frames = pick_chunk_frames(o, (uint32_t)r->in_info.channels);
		err = make_engine(r, o, eb);
	}
	t[3] = now_ms();
	if (!err)
		err = stopped(o, eb);
	if (!err)
		err = open_output(r, o, eb);
	gf_debug("offline: set-up ms: input %.1f, configuration and taps %.1f, engine %.1f, output %.1f",
		 t[1] - t[0], t[2] - t[1], t[3] - t[2], now_ms() - t[3]);
	return err;
}

int gf_offline_run(const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	struct run r = {.tmp_fd = -1};
	struct pipeline p;
	int have_pipeline = 0;
	double t0 = now_ms(), t1 = t0, t2 = t0, t3 = t0;
	int err = prepare(&r, o, eb);
	if (err)
		goto done;
	gf_debug("%s: %s, %s, %d ch, %d Hz, %lld frames -> %s: %s %s; engine: %s", o->input,
		 major_name(r.in_info.format & SF_FORMAT_TYPEMASK), gf_offline_format_name(r.in_info.format),
		 r.in_info.channels, r.in_info.samplerate, (long long)r.in_info.frames, o->output,
		 major_name(r.out_info.format & SF_FORMAT_TYPEMASK),
		 gf_offline_format_name(r.out_info.format), gf_engine_describe(r.engine));
	t1 = now_ms();
	err = pipeline_init(&p, o, (uint32_t)r.in_info.channels, r.chunk_frames,
			    strcmp(gf_engine_backend_name(r.engine), "cuda") == 0);
	have_pipeline = 1;
	t2 = now_ms();
	/* Streams from a pipe report SF_COUNT_MAX frames: no percent or ETA then. */
	uint64_t total = r.in_info.frames == SF_COUNT_MAX ? 0 : (uint64_t)r.in_info.frames;
	if (!err)
		err = gf_progress_new(&r.prog, o->progress ? stderr : NULL, total,
				      (uint32_t)r.in_info.samplerate);
	if (err) {
		gf_errbuf_set(eb, "%s", gf_strerror(err));
		goto done;
	}
	p.in = r.in;
	p.out = r.out;
	p.clips = subtype_clips(r.out_info.format);
	err = pipeline_run(&p, r.engine, r.prog, eb);
	t3 = now_ms();
	gf_debug("offline: streaming ms busy: reader %.1f, engine %.1f, writer %.1f", p.busy_ms[0],
		 p.busy_ms[1], p.busy_ms[2]);
	gf_progress_finish(r.prog);
	if (!err && total && total != p.frames_read)
		gf_warn("%s: the header promised %lld frames, the file held %llu", o->input,
			(long long)r.in_info.frames, (unsigned long long)p.frames_read);
done:
	err = finish_output(&r, o, err, eb);
	if (!err)
		report(&r, &p, o);
	if (have_pipeline)
		pipeline_free(&p);
	gf_progress_free(r.prog);
	gf_engine_free(r.engine);
	gf_filter_set_free(r.fs);
	gf_config_free(r.cfg);
	if (r.in)
		sf_close(r.in);
	gf_cuda_prewarm_wait(); /* a failed set-up may leave CUDA's start-up running */
	gf_debug("offline: ms: set-up %.1f, pipeline buffers %.1f, streaming %.1f, finish and teardown %.1f",
		 t1 - t0, t2 - t1, t3 - t2, now_ms() - t3);
	return err;
}
