/*
 * A batch: many files in one process. Lanes (threads) take the next file from
 * a shared counter, so a free lane, and so the first free GPU, gets it; each
 * lane runs the file through its own reader/engine/writer pipeline and keeps
 * one engine per filter shape across its files (offline_ctx.c). With several
 * lanes, decoding one file, filtering another and encoding a third overlap
 * on as many cores as there are lanes. The calling thread draws the batch's
 * progress and collects the results.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "deadline.h"
#include "gpu.h"
#include "log.h"
#include "offline_internal.h"
#include "safe_file.h"

#define MAX_LANES 256u
#define DRAW_NS 100000000L /* the bar is redrawn every 100 ms */

struct batch {
	const struct gf_offline_batch_opts *o;
	struct gf_offline_ctx ctx;
	size_t *todo; /* indices into o->jobs of the files to run */
	size_t n_todo;
	uint64_t *bytes; /* per todo entry: the input's size (the bar's measure of work) */
	uint64_t bytes_total;
	atomic_size_t next;

	pthread_mutex_t mu; /* guards what follows */
	pthread_cond_t cv;
	uint32_t running;
	size_t written, failed, on_gpu;
	int first_err;
	double audio_s;
	uint64_t bytes_done;
};

struct lane_thread {
	struct batch *b;
	struct gf_offline_lane lane;
	pthread_t tid;
	int started;
};

static int stop_requested(const struct batch *b)
{
	return b->o->base.stop && atomic_load(b->o->base.stop);
}

static void file_done(struct batch *b, size_t t, int err, const struct gf_offline_file_stats *st)
{
	pthread_mutex_lock(&b->mu);
	if (!err) {
		b->written++;
		b->on_gpu += st->on_gpu != 0;
		b->audio_s += st->rate ? (double)st->frames / st->rate : 0.0;
	} else if (err != GF_E_INTERRUPTED) {
		b->failed++;
		if (!b->first_err)
			b->first_err = err;
	}
	b->bytes_done += b->bytes[t];
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

static void *lane_main(void *arg)
{
	struct lane_thread *lt = arg;
	struct batch *b = lt->b;
	while (!stop_requested(b)) {
		size_t t = atomic_fetch_add(&b->next, 1);
		if (t >= b->n_todo)
			break;
		const struct gf_offline_job *job = &b->o->jobs->v[b->todo[t]];
		struct gf_offline_opts fo = b->o->base;
		fo.input = job->input;
		fo.output = job->output;
		fo.progress = 0;
		struct gf_offline_file_stats st = {0};
		struct gf_errbuf eb = {{0}};
		int err = gf_offline_file_run(&lt->lane, &fo, &st, &eb);
		if (err && err != GF_E_INTERRUPTED)
			gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		file_done(b, t, err, &st);
		if (err == GF_E_INTERRUPTED)
			break;
	}
	pthread_mutex_lock(&b->mu);
	b->running--;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/*
 * --skip-existing: outputs appear by rename only when complete, so one that
 * exists is done, unless it is not a sound file with frames in it (empty,
 * cut short by another tool, unreadable): that one is filtered again, as a
 * single run would replace it.
 */
static int output_done(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	struct gf_errbuf eb = {{0}};
	int fd = gf_file_open_read(path, "output", 0, &eb);
	SF_INFO info = {0};
	SNDFILE *sf = fd >= 0 ? sf_open_fd(fd, SFM_READ, &info, SF_TRUE) : NULL;
	if (!sf && fd >= 0)
		close(fd);
	int done = sf && info.frames > 0;
	if (sf)
		sf_close(sf);
	if (!done)
		gf_notice("%s exists but is %s: filtering it again", path,
			  eb.msg[0]	    ? "not a regular file"
			  : st.st_size == 0 ? "empty"
					    : "not a readable sound file");
	return done;
}

/* The files still to do: all, less those whose output is done under --skip-existing. */
static int plan_files(struct batch *b, size_t *skipped)
{
	const struct gf_offline_jobs *j = b->o->jobs;
	b->todo = malloc((j->n ? j->n : 1) * sizeof(*b->todo));
	b->bytes = malloc((j->n ? j->n : 1) * sizeof(*b->bytes));
	if (!b->todo || !b->bytes)
		return GF_E_NOMEM;
	*skipped = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct stat si;
		if (b->o->skip_existing && output_done(j->v[i].output)) {
			(*skipped)++;
			continue;
		}
		b->bytes[b->n_todo] =
			stat(j->v[i].input, &si) == 0 && si.st_size > 0 ? (uint64_t)si.st_size : 1;
		b->bytes_total += b->bytes[b->n_todo];
		b->todo[b->n_todo++] = i;
	}
	return 0;
}

static uint32_t pick_lanes(const struct gf_offline_batch_opts *o, size_t files)
{
	uint64_t n = o->lanes ? o->lanes : gf_offline_cpus();
	if (n > files)
		n = files;
	if (n > MAX_LANES)
		n = MAX_LANES;
	return n ? (uint32_t)n : 1;
}

/* Draw the batch's bar until every lane is done (calling thread). */
static void watch(struct batch *b, FILE *tty, double t0)
{
	size_t drawn = 0;
	pthread_mutex_lock(&b->mu);
	while (b->running) {
		if (tty) {
			double el = ((1e3 * gf_now_s()) - t0) / 1e3;
			double f = b->bytes_total ? (double)b->bytes_done / (double)b->bytes_total : 0.0;
			char bar[160], line[320];
			gf_progress_format(bar, sizeof(bar), f, el > 0 ? b->audio_s / el : 0.0,
					   f > 0.0 ? el * (1.0 - f) / f : -1.0);
			char failed[48] = "";
			if (b->failed)
				snprintf(failed, sizeof(failed), " (%zu failed)", b->failed);
			int n = snprintf(line, sizeof(line), "%s  %zu/%zu files%s, %.2f h audio", bar,
					 b->written + b->failed, b->n_todo, failed, b->audio_s / 3600.0);
			fprintf(tty, "\r%s%*s", line, drawn > (size_t)n ? (int)(drawn - (size_t)n) : 0, "");
			fflush(tty);
			drawn = (size_t)n;
		}
		struct timespec ts = gf_deadline_in(CLOCK_REALTIME, DRAW_NS);
		pthread_cond_timedwait(&b->cv, &b->mu, &ts);
	}
	pthread_mutex_unlock(&b->mu);
	if (tty && drawn)
		fprintf(tty, "\r%*s\r", (int)drawn, "");
}

static int run_lanes(struct batch *b, const int *gpus, uint32_t n_gpus, enum gf_backend_kind backend,
		     uint32_t lanes, struct gf_errbuf *eb)
{
	struct lane_thread *lt = calloc(lanes, sizeof(*lt));
	if (!lt)
		return GF_E_NOMEM;
	double t0 = (1e3 * gf_now_s());
	int err = 0;
	for (uint32_t i = 0; i < lanes; i++) {
		lt[i].b = b;
		gf_offline_lane_init(&lt[i].lane, &b->ctx, n_gpus ? gpus[i % n_gpus] : -1, backend);
		pthread_mutex_lock(&b->mu);
		b->running++;
		pthread_mutex_unlock(&b->mu);
		if (pthread_create(&lt[i].tid, NULL, lane_main, &lt[i]) != 0) {
			pthread_mutex_lock(&b->mu);
			b->running--;
			pthread_mutex_unlock(&b->mu);
			if (i == 0) {
				gf_errbuf_set(eb, "cannot start a batch thread: %s", strerror(errno));
				err = GF_E_SYSTEM;
			}
			break; /* fewer lanes: the ones running take every file */
		}
		lt[i].started = 1;
	}
	watch(b, b->o->base.progress ? stderr : NULL, t0);
	for (uint32_t i = 0; i < lanes; i++) {
		if (lt[i].started)
			pthread_join(lt[i].tid, NULL);
		gf_offline_lane_free(&lt[i].lane);
	}
	free(lt);
	return err;
}

/*
 * Which devices the lanes use. Without --gpu: the configuration's (the engine
 * picks, and falls back to the CPU under auto, per lane). With --gpu: the
 * usable ones of the list; none usable fails under --backend cuda and says
 * so and runs on the CPU under auto.
 */
static int pick_devices(const struct gf_offline_batch_opts *o, const struct gf_config *cfg, int *gpus,
			uint32_t *n_gpus, enum gf_backend_kind *backend, struct gf_errbuf *eb)
{
	*backend = GF_BACKEND_AUTO; /* lanes: the configuration's (with the command line's override) */
	*n_gpus = 0;
	if (cfg->backend == GF_BACKEND_CPU)
		return 0;
	if (!o->gpus) {
		gpus[(*n_gpus)++] = o->base.gpu_set ? o->base.gpu_index : cfg->gpu_index;
		return 0;
	}
	char desc[256] = "", why[256] = "";
	uint32_t n = o->gpus->all ? 64 : o->gpus->n;
	for (uint32_t i = 0; i < n; i++) {
		int dev = o->gpus->all ? (int)i : o->gpus->index[i];
		int err = gf_cuda_probe(dev, desc, sizeof(desc));
		if (!err) {
			gf_info("batch: GPU %d: %s", dev, desc);
			gpus[(*n_gpus)++] = dev;
			continue;
		}
		if (!*why || !o->gpus->all)
			snprintf(why, sizeof(why), "%s", desc);
		if (err == GF_E_UNSUPPORTED || o->gpus->all)
			break; /* "all": the devices are numbered from 0 */
		gf_warn("batch: --gpu %d: %s: not used", dev, desc);
	}
	if (*n_gpus)
		return 0;
	if (cfg->backend == GF_BACKEND_CUDA) {
		gf_errbuf_set(eb, "--gpu: no usable CUDA device (%s) and --backend cuda", why);
		return GF_E_NOGPU;
	}
	gf_warn("--gpu: no usable CUDA device (%s): filtering on the CPU (auto backend)", why);
	*backend = GF_BACKEND_CPU;
	return 0;
}

static void summarize(const struct batch *b, const struct gf_offline_batch_result *r)
{
	gf_log(r->failed || r->not_started ? GF_LOG_WARN : GF_LOG_INFO,
	       "batch: %zu files: %zu written, %zu failed, %zu skipped, %zu not done; %.2f h of audio in "
	       "%.2f s (%.0fx realtime), %u lanes on %s",
	       b->o->jobs->n, r->written, r->failed, r->skipped, r->not_started, r->audio_s / 3600.0,
	       r->wall_s, r->wall_s > 0 ? r->audio_s / r->wall_s : 0.0, r->lanes,
	       r->gpus ? (r->gpus == 1 ? "1 GPU" : "several GPUs") : "the CPU");
}

static int batch_run(struct batch *b, struct gf_offline_batch_result *res, struct gf_errbuf *eb)
{
	const struct gf_offline_batch_opts *o = b->o;
	double t0 = (1e3 * gf_now_s());
	const struct gf_config *cfg;
	/* The files first: auto weighs the batch's size (offline_ctx.c) from the config's load on. */
	int err = plan_files(b, &res->skipped);
	uint32_t lanes = pick_lanes(o, b->n_todo);
	b->ctx.job_bytes = b->bytes_total;
	b->ctx.job_lanes = lanes;
	uint32_t share = gf_offline_cpus() / lanes;
	b->ctx.stripe_max = o->base.threads ? o->base.threads : share ? share : 1;
	b->ctx.weigh_cost = !o->gpus && !o->base.gpu_set; /* --gpu asks for the GPUs */
	int gpus[64];
	uint32_t n_gpus = 0;
	enum gf_backend_kind backend = GF_BACKEND_AUTO;
	if (!err)
		err = gf_offline_ctx_config(&b->ctx, &cfg, eb);
	if (!err)
		err = pick_devices(o, cfg, gpus, &n_gpus, &backend, eb);
	if (err)
		return err;
	if (b->n_todo)
		err = run_lanes(b, gpus, n_gpus, backend, lanes, eb);
	res->written = b->written;
	res->failed = b->failed;
	res->not_started = b->n_todo - b->written - b->failed;
	res->audio_s = b->audio_s;
	res->wall_s = ((1e3 * gf_now_s()) - t0) / 1e3;
	res->lanes = b->n_todo ? lanes : 0;
	res->gpus = b->on_gpu ? n_gpus : 0; /* auto may have fallen back to the CPU */
	res->first_err = stop_requested(b) && res->not_started ? GF_E_INTERRUPTED : b->first_err;
	summarize(b, res);
	if (!err && res->first_err) {
		err = res->first_err;
		if (err == GF_E_INTERRUPTED)
			gf_errbuf_set(eb, "interrupted: %zu of %zu files not written", res->not_started,
				      b->n_todo);
		else
			gf_errbuf_set(eb, "%zu of %zu files failed", res->failed, b->n_todo);
	}
	return err;
}

int gf_offline_batch_run(const struct gf_offline_batch_opts *o, struct gf_offline_batch_result *res,
			 struct gf_errbuf *eb)
{
	struct batch b;
	memset(&b, 0, sizeof(b));
	memset(res, 0, sizeof(*res));
	b.o = o;
	atomic_init(&b.next, 0);
	int err = gf_offline_jobs_check(o->jobs, eb);
	if (err)
		return err;
	err = gf_offline_ctx_init(&b.ctx, &o->base);
	if (err)
		return err;
	b.ctx.quiet_files = 1;
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	err = batch_run(&b, res, eb);
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.mu);
	gf_offline_ctx_free(&b.ctx);
	free(b.todo);
	free(b.bytes);
	gf_cuda_prewarm_wait();
	return err;
}

int gf_offline_gpus_parse(const char *s, struct gf_offline_gpus *g)
{
	memset(g, 0, sizeof(*g));
	if (strcmp(s, "all") == 0) {
		g->all = 1;
		return 0;
	}
	const char *p = s;
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+' || v > 1023 ||
		    g->n == sizeof(g->index) / sizeof(g->index[0]))
			return GF_E_INVAL;
		for (uint32_t i = 0; i < g->n; i++)
			if (g->index[i] == (int)v)
				return GF_E_INVAL;
		g->index[g->n++] = (int)v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return GF_E_INVAL;
		p = end + 1;
	}
}
