/*
 * The neural stage's reference backend: DeepFilterNet's own runtime,
 * libdeepfilter.so (libDF's C API, capi.rs), loaded with dlopen() the first
 * time a stage needs it, so the program links nothing of it and runs without
 * it. One DFState per channel: the runtime's state is mono.
 *
 * The runtime panics, and so aborts the process, on a model it cannot load
 * (capi.rs unwraps every error). A model is therefore opened once in a child
 * process first (probe_model): a file that is missing, unreadable or not a
 * model it can load becomes an error value naming the file, not a crash.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dfn.h"
#include "neural.h"
#include "safe_file.h"

#define DFN_LIB "libdeepfilter.so"
/* The longest a model may take to load in the probe (it takes 1 to 3 s on a loaded machine). */
#define PROBE_TIMEOUT_S 60

typedef struct DFState DFState;
struct dfn_api {
	DFState *(*create)(const char *path, float atten_lim, const char *log_level);
	size_t (*frame_length)(DFState *st);
	float (*process_frame)(DFState *st, float *in, float *out);
	void (*set_atten_lim)(DFState *st, float lim_db);
	void (*set_post_filter_beta)(DFState *st, float beta);
	void (*free)(DFState *st);
};

struct ref_inst {
	const struct dfn_api *api;
	uint32_t channels;
	DFState **st;
	float *scratch; /* the runtime takes non-const input: a hop per channel, its own */
};

const char *gf_neural_default_dir(void)
{
	const char *env = getenv("GPUFIR_DEEPFILTER_DIR");
	return env && env[0] ? env : GPUFIR_DEEPFILTER_DIR;
}

/* The library is never closed: a Rust runtime's thread-local destructors may still be queued. */
static int load_api(const char *path, struct dfn_api *a, struct gf_errbuf *eb)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		gf_errbuf_set(eb,
			      "the DeepFilterNet runtime could not be loaded: %s (install it with "
			      "scripts/install-deepfilter.sh)",
			      e ? e : path);
		return GF_E_IO;
	}
	*(void **)&a->create = dlsym(h, "df_create");
	*(void **)&a->frame_length = dlsym(h, "df_get_frame_length");
	*(void **)&a->process_frame = dlsym(h, "df_process_frame");
	*(void **)&a->set_atten_lim = dlsym(h, "df_set_atten_lim");
	*(void **)&a->set_post_filter_beta = dlsym(h, "df_set_post_filter_beta");
	*(void **)&a->free = dlsym(h, "df_free");
	if (!a->create || !a->frame_length || !a->process_frame || !a->set_atten_lim ||
	    !a->set_post_filter_beta || !a->free) {
		gf_errbuf_set(eb,
			      "%s: not the DeepFilterNet C runtime (df_create, df_process_frame, ... "
			      "missing)",
			      path);
		return GF_E_IO;
	}
	return 0;
}

/* One loaded runtime per process (the first library asked for; a later different path is refused). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dfn_api g_api;
static char g_path[4096];

static int get_api(const char *library, const struct dfn_api **out, struct gf_errbuf *eb)
{
	char def[4096];
	if (!library) {
		snprintf(def, sizeof(def), "%s/%s", gf_neural_default_dir(), DFN_LIB);
		library = def;
	}
	pthread_mutex_lock(&g_lock);
	int r = 0;
	if (!g_path[0]) {
		if (!(r = load_api(library, &g_api, eb)))
			snprintf(g_path, sizeof(g_path), "%s", library);
	} else if (strcmp(g_path, library) != 0) {
		gf_errbuf_set(eb, "%s: another DeepFilterNet runtime (%s) is loaded already", library,
			      g_path);
		r = GF_E_INVAL;
	}
	pthread_mutex_unlock(&g_lock);
	*out = r ? NULL : &g_api;
	return r;
}

/* Waits for child @p pid at most PROBE_TIMEOUT_S: 1 with its status, or 0 (it is killed). A child
 * forked from a process with threads can deadlock on a lock another thread held at the fork. */
static int wait_child(pid_t pid, int *status)
{
	for (int i = 0; i < PROBE_TIMEOUT_S * 100; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid;
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Loads @p model in a child process: 0, or GF_E_IO with why (see the top of the file). */
static int probe_model(const struct dfn_api *a, const char *model, struct gf_errbuf *eb)
{
	int fd = gf_file_open_read(model, "model file", 0, eb);
	if (fd < 0)
		return GF_E_IO;
	close(fd);
	pid_t pid = fork();
	if (pid < 0) {
		gf_errbuf_set(eb, "%s: could not start a process to check the model", model);
		return GF_E_SYSTEM;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY); /* the runtime's panic message: ours replaces it */
		if (null >= 0)
			dup2(null, 2);
		DFState *st = a->create(model, 100.0f, NULL);
		_exit(st && a->frame_length(st) == GF_NEURAL_HOP ? 0 : 3);
	}
	int status = 0;
	if (!wait_child(pid, &status)) {
		gf_errbuf_set(eb, "%s: the DeepFilterNet runtime did not load this model within %d s", model,
			      PROBE_TIMEOUT_S);
		return GF_E_IO;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		gf_errbuf_set(eb, "%s: not a DeepFilterNet3 model at 48 kHz (its hop is not %u frames)",
			      model, GF_NEURAL_HOP);
	else
		gf_errbuf_set(eb,
			      "%s: the DeepFilterNet runtime could not load this model (a "
			      "DeepFilterNet3_onnx.tar.gz is expected)",
			      model);
	return GF_E_IO;
}

static void ref_free(void *p)
{
	struct ref_inst *r = p;
	if (!r)
		return;
	for (uint32_t c = 0; r->st && c < r->channels; c++)
		if (r->st[c])
			r->api->free(r->st[c]);
	free(r->st);
	free(r->scratch);
	free(r);
}

/* States [first, end) of a creation spread over threads: each loads the model on its own. */
struct create_part {
	struct ref_inst *r;
	const struct gf_neural_params *p;
	uint32_t first, end;
	pthread_t th;
	int started;
};

static void *create_run(void *arg)
{
	struct create_part *k = arg;
	for (uint32_t c = k->first; c < k->end; c++) {
		if (!(k->r->st[c] = k->r->api->create(k->p->model, k->p->atten_lim_db, NULL)))
			break;
		k->r->api->set_post_filter_beta(k->r->st[c], k->p->post_filter_beta);
	}
	return NULL;
}

/* One state per channel, made on one thread per CPU (a model takes 1 to 2 s to load): 1 when all
 * were made. Threads that cannot start leave their channels to this one. */
static int create_states(struct ref_inst *r, const struct gf_neural_params *p)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = cpus > 1 ? (uint32_t)cpus : 1u;
	n = n < r->channels ? n : r->channels;
	struct create_part parts[64];
	n = n < 64 ? n : 64;
	for (uint32_t k = 0; k < n; k++) {
		parts[k] = (struct create_part){r,
						p,
						(uint32_t)((uint64_t)r->channels * k / n),
						(uint32_t)((uint64_t)r->channels * (k + 1) / n),
						0,
						0};
		parts[k].started = k > 0 && pthread_create(&parts[k].th, NULL, create_run, &parts[k]) == 0;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!parts[k].started)
			create_run(&parts[k]);
	for (uint32_t k = 0; k < n; k++)
		if (parts[k].started)
			pthread_join(parts[k].th, NULL);
	for (uint32_t c = 0; c < r->channels; c++)
		if (!r->st[c])
			return 0;
	return 1;
}

static int ref_create(const struct gf_neural_params *p, uint32_t channels, void **out, struct gf_errbuf *eb)
{
	*out = NULL;
	const struct dfn_api *a;
	int err = get_api(p->library, &a, eb);
	if (err || (err = probe_model(a, p->model, eb)))
		return err;
	struct ref_inst *r = calloc(1, sizeof(*r));
	if (!r)
		return GF_E_NOMEM;
	r->api = a;
	r->channels = channels;
	r->st = calloc(channels, sizeof(*r->st));
	r->scratch = malloc((size_t)channels * GF_NEURAL_HOP * sizeof(float));
	if (!r->st || !r->scratch) {
		ref_free(r);
		return GF_E_NOMEM;
	}
	if (!create_states(r, p)) {
		gf_errbuf_set(eb, "%s: the DeepFilterNet runtime made no state", p->model);
		ref_free(r);
		return GF_E_IO;
	}
	*out = r;
	return 0;
}

static void ref_process(void *p, uint32_t first, uint32_t n, const float *in, float *out)
{
	struct ref_inst *r = p;
	for (uint32_t k = 0; k < n; k++) {
		float *x = r->scratch + (size_t)(first + k) * GF_NEURAL_HOP;
		memcpy(x, in + (size_t)k * GF_NEURAL_HOP, GF_NEURAL_HOP * sizeof(float));
		r->api->process_frame(r->st[first + k], x, out + (size_t)k * GF_NEURAL_HOP);
	}
}

static void ref_set_atten_lim(void *p, uint32_t first, uint32_t n, float db)
{
	struct ref_inst *r = p;
	for (uint32_t k = 0; k < n; k++)
		r->api->set_atten_lim(r->st[first + k], db);
}

static uint32_t ref_latency(const void *p)
{
	(void)p;
	/* The model's STFT and its 2 hops of lookahead (config.ini of DeepFilterNet3: df_lookahead =
	 * conv_lookahead = 2), as the engine's own forward computes them: measured in
	 * tests/unit/suppress (test_neural_bank.c) as the lag of the runtime's output. */
	return DFN_LATENCY;
}

const struct gf_neural_ops gf_neural_ref_ops = {
	.name = "DeepFilterNet runtime (libdeepfilter)",
	.create = ref_create,
	.process = ref_process,
	.set_atten_lim = ref_set_atten_lim,
	.latency = ref_latency,
	.free = ref_free,
};
