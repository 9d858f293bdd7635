/*
 * Allocation that never stalls a running instance (docs/cuda.md, "Nothing
 * device-wide while audio runs"): device memory is stream-ordered
 * (cudaMallocAsync / cudaFreeAsync from the device's default pool, whose
 * release threshold is raised so that freed memory stays reserved instead of
 * going back to the driver with a device-wide synchronize); pinned host
 * buffers and cuFFT plans are kept in process-wide caches, so a reload with
 * the same sizes reuses the previous instance's instead of calling
 * cudaFreeHost or making a plan while another instance streams. What cannot
 * go back to a cache is retired: freed once no instance is alive, since
 * cudaFreeHost and cufftDestroy synchronize the device, which stalls a
 * streaming instance and never returns while one runs a persistent kernel.
 *
 * Threads: control thread (create/destroy); the caches are guarded by one
 * mutex. The device helper gf_cu_use_device is for any thread.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cu_common.cuh"

#define GF_CU_MAX_DEVICES_POOL 16
#define GF_CU_HOST_CACHE 64
#define GF_CU_PLAN_CACHE 128

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_pool_ready[GF_CU_MAX_DEVICES_POOL];

int gf_cu_use_device(int dev, struct gf_errbuf *eb)
{
	static __thread int t_dev = -1; /* this thread's current device, as last set here */
	if (t_dev == dev)
		return 0;
	CU_RET(eb, cudaSetDevice(dev));
	t_dev = dev;
	return 0;
}

int gf_cu_pool_init(int dev, struct gf_errbuf *eb)
{
	int err = 0;
	pthread_mutex_lock(&g_pool_mu);
	if (dev >= 0 && dev < GF_CU_MAX_DEVICES_POOL && !g_pool_ready[dev]) {
		cudaMemPool_t pool;
		uint64_t keep = UINT64_MAX;
		err = CU_TRY(eb, cudaDeviceGetDefaultMemPool(&pool, dev));
		if (!err)
			err = CU_TRY(eb,
				     cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
		g_pool_ready[dev] = !err;
	}
	pthread_mutex_unlock(&g_pool_mu);
	return err;
}

int gf_cu_dmalloc(void **p, size_t bytes, cudaStream_t s, struct gf_errbuf *eb)
{
	*p = NULL;
	CU_RET(eb, cudaMallocAsync(p, bytes ? bytes : 16, s));
	return 0;
}

void gf_cu_dfree(void *p, cudaStream_t s)
{
	if (p && cudaFreeAsync(p, s) != cudaSuccess)
		(void)cudaGetLastError();
}

struct host_buf {
	void *p;
	size_t bytes;
	unsigned flags;
	int used;
};
static struct host_buf g_host[GF_CU_HOST_CACHE];

/* Retired buffers and plans, and the instances alive (under g_pool_mu). */
struct retired {
	struct retired *next;
	void *p;	  /* a pinned host buffer, or NULL */
	cufftHandle plan; /* else a plan */
};
static struct retired *g_retired;
static int g_live_insts;

/* Under g_pool_mu. Where no node can be had, the buffer is leaked: freeing
 * it now could hang this thread behind a persistent kernel. */
static void retire(void *p, cufftHandle plan)
{
	struct retired *r = (struct retired *)malloc(sizeof(*r));
	if (!r)
		return;
	*r = (struct retired){g_retired, p, plan};
	g_retired = r;
}

/* Takes the retired list when no instance is alive (under g_pool_mu). */
static struct retired *take_retired(void)
{
	struct retired *r = g_live_insts == 0 ? g_retired : NULL;
	if (r)
		g_retired = NULL;
	return r;
}

static void free_retired(struct retired *r)
{
	while (r) {
		struct retired *next = r->next;
		if (r->p)
			cudaFreeHost(r->p);
		else
			cufftDestroy(r->plan);
		free(r);
		r = next;
	}
	(void)cudaGetLastError();
}

static int g_doubt;    /* instances in doubt (atomic) */
static int g_resident; /* persistent kernels running (atomic) */

/* The audio thread (a late call) and the control or a build thread (a kernel
 * that did not stop) may both mark an instance: an exchange counts it once. */
void gf_cu_doubt(struct gf_cu_inst *in)
{
	if (__atomic_exchange_n(&in->in_doubt, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_add_fetch(&g_doubt, 1, __ATOMIC_RELEASE);
}

void gf_cu_doubt_end(struct gf_cu_inst *in)
{
	if (__atomic_exchange_n(&in->in_doubt, 0, __ATOMIC_ACQ_REL) == 1)
		__atomic_sub_fetch(&g_doubt, 1, __ATOMIC_RELEASE);
}

void gf_cu_resident_begin(void)
{
	__atomic_add_fetch(&g_resident, 1, __ATOMIC_RELEASE);
}

void gf_cu_resident_end(void)
{
	__atomic_sub_fetch(&g_resident, 1, __ATOMIC_RELEASE);
}

int gf_cu_device_wait_may_hang(void)
{
	return __atomic_load_n(&g_doubt, __ATOMIC_ACQUIRE) > 0 ||
	       __atomic_load_n(&g_resident, __ATOMIC_ACQUIRE) > 0;
}

void gf_cu_inst_begin(void)
{
	pthread_mutex_lock(&g_pool_mu);
	g_live_insts++;
	pthread_mutex_unlock(&g_pool_mu);
}

void gf_cu_inst_end(void)
{
	pthread_mutex_lock(&g_pool_mu);
	g_live_insts--;
	struct retired *r = take_retired();
	pthread_mutex_unlock(&g_pool_mu);
	free_retired(r);
}

/* Under g_pool_mu: a free slot, else one whose buffer no instance holds
 * (that buffer retired: the cache keeps the sizes in use now), else -1. */
static int host_slot(void)
{
	for (int i = 0; i < GF_CU_HOST_CACHE; i++)
		if (!g_host[i].p)
			return i;
	for (int i = 0; i < GF_CU_HOST_CACHE; i++)
		if (!g_host[i].used) {
			retire(g_host[i].p, 0);
			g_host[i].p = NULL;
			return i;
		}
	return -1;
}

int gf_cu_halloc(void **p, size_t bytes, unsigned flags, struct gf_errbuf *eb)
{
	int err = 0;
	*p = NULL;
	pthread_mutex_lock(&g_pool_mu);
	for (int i = 0; i < GF_CU_HOST_CACHE && !*p; i++) {
		struct host_buf *h = &g_host[i];
		if (h->p && !h->used && h->bytes == bytes && h->flags == flags)
			h->used = 1, *p = h->p;
	}
	if (!*p) {
		err = CU_TRY(eb, cudaHostAlloc(p, bytes, flags));
		int slot = err ? -1 : host_slot();
		if (slot >= 0)
			g_host[slot] = (struct host_buf){*p, bytes, flags, 1};
	}
	pthread_mutex_unlock(&g_pool_mu);
	return err;
}

void gf_cu_hfree(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&g_pool_mu);
	int found = 0;
	for (int i = 0; i < GF_CU_HOST_CACHE && !found; i++)
		if (g_host[i].p == p)
			g_host[i].used = 0, found = 1;
	if (!found) /* the cache was full of buffers in use when it was made */
		retire(p, 0);
	pthread_mutex_unlock(&g_pool_mu);
}

struct plan_ent {
	cufftHandle h;
	int dev, used, made;
	long long n, batch;
	cufftType type;
	size_t ws;
};
static struct plan_ent g_plans[GF_CU_PLAN_CACHE];

/* A 1-D plan of @p n points x @p batch, packed (R2C: in n reals, out n/2+1 bins). */
static int make_plan(struct plan_ent *e, struct gf_errbuf *eb)
{
	long long n = e->n, nb = n / 2 + 1;
	CUFFT_RET(eb, cufftCreate(&e->h));
	e->made = 1;
	CUFFT_RET(eb, cufftSetAutoAllocation(e->h, 0));
	if (e->type == CUFFT_R2C)
		CUFFT_RET(eb, cufftMakePlanMany64(e->h, 1, &n, NULL, 1, n, NULL, 1, nb, CUFFT_R2C, e->batch,
						  &e->ws));
	else
		CUFFT_RET(eb, cufftMakePlanMany64(e->h, 1, &n, NULL, 1, nb, NULL, 1, n, CUFFT_C2R, e->batch,
						  &e->ws));
	return 0;
}

int gf_cu_plan_get(cufftHandle *h, size_t *ws, int dev, long long n, long long batch, cufftType type,
		   int *made_new, struct gf_errbuf *eb)
{
	int err = 0, spares = 0;
	struct plan_ent *got = NULL;
	pthread_mutex_lock(&g_pool_mu);
	for (int i = 0; i < GF_CU_PLAN_CACHE && !got; i++) {
		struct plan_ent *e = &g_plans[i];
		if (e->made && !e->used && e->dev == dev && e->n == n && e->batch == batch && e->type == type)
			got = e;
	}
	/* A miss makes two: the second waits for the next instance of this
	 * size (a reload's, while this one streams). */
	for (int i = 0; i < GF_CU_PLAN_CACHE && !got && !err && spares < 2; i++) {
		struct plan_ent *e = &g_plans[i];
		if (e->made)
			continue;
		*e = (struct plan_ent){0, dev, 0, 0, n, batch, type, 0};
		err = make_plan(e, eb);
		if (err) {
			if (e->made)
				cufftDestroy(e->h);
			e->made = 0;
		} else if (spares++ == 0) {
			got = e;
		}
	}
	if (got) {
		got->used = 1;
		*h = got->h;
		*ws = got->ws;
	}
	pthread_mutex_unlock(&g_pool_mu);
	*made_new = spares > 0;
	if (!err && !got) { /* cache full: a plan of its own, destroyed by put */
		struct plan_ent e = {0, dev, 1, 0, n, batch, type, 0};
		err = make_plan(&e, eb);
		if (err && e.made)
			cufftDestroy(e.h);
		*h = e.h;
		*ws = e.ws;
		*made_new = 1;
	}
	return err;
}

void gf_cu_plan_put(cufftHandle h)
{
	int found = 0;
	pthread_mutex_lock(&g_pool_mu);
	for (int i = 0; i < GF_CU_PLAN_CACHE && !found; i++)
		if (g_plans[i].made && g_plans[i].used && g_plans[i].h == h)
			g_plans[i].used = 0, found = 1;
	if (!found) /* made while the cache was full */
		retire(NULL, h);
	pthread_mutex_unlock(&g_pool_mu);
}

/*
 * Measured choices per shape (device, channels, block, and taps where the
 * choice depends on them), for later instances: a reload of the same shape
 * measures nothing. Under g_pool_mu.
 */
#define GF_CU_MEMO 64
struct memo {
	int dev, set;
	uint32_t channels, max_block, taps;
	uint32_t a, b; /* what the table keeps */
};
static struct memo g_calib[GF_CU_MEMO];	  /* a: direct_max, b: fft_min */
static struct memo g_choice[GF_CU_CHOICES][GF_CU_MEMO]; /* a: the faster path taken (1) or not (0) */

/* The entry of a shape; with @p fresh (a, b) a new one where there is none (NULL: full). */
static struct memo *memo_find(struct memo *t, int dev, uint32_t channels, uint32_t max_block, uint32_t taps,
			      const struct memo *fresh)
{
	for (int i = 0; i < GF_CU_MEMO; i++)
		if (t[i].set && t[i].dev == dev && t[i].channels == channels && t[i].max_block == max_block &&
		    t[i].taps == taps)
			return &t[i];
	for (int i = 0; i < GF_CU_MEMO && fresh; i++)
		if (!t[i].set) {
			t[i] = (struct memo){dev, 1, channels, max_block, taps, fresh->a, fresh->b};
			return &t[i];
		}
	return NULL;
}

void gf_cu_calib_lookup(int dev, uint32_t channels, uint32_t max_block, uint32_t *direct_max,
			uint32_t *fft_min)
{
	pthread_mutex_lock(&g_pool_mu);
	const struct memo *c = memo_find(g_calib, dev, channels, max_block, 0, NULL);
	*direct_max = c ? c->a : 0;
	*fft_min = c ? c->b : UINT32_MAX;
	pthread_mutex_unlock(&g_pool_mu);
}

void gf_cu_calib_store(int dev, uint32_t channels, uint32_t max_block, uint32_t taps, int direct_won)
{
	const struct memo none = {0, 0, 0, 0, 0, 0, UINT32_MAX};
	pthread_mutex_lock(&g_pool_mu);
	struct memo *c = memo_find(g_calib, dev, channels, max_block, 0, &none);
	if (c && direct_won && taps > c->a && taps < c->b)
		c->a = taps;
	else if (c && !direct_won && taps < c->b && taps > c->a)
		c->b = taps;
	pthread_mutex_unlock(&g_pool_mu);
}

int gf_cu_choice_lookup(enum gf_cu_choice what, int dev, uint32_t channels, uint32_t max_block,
			uint32_t taps_pad)
{
	pthread_mutex_lock(&g_pool_mu);
	const struct memo *c = memo_find(g_choice[what], dev, channels, max_block, taps_pad, NULL);
	int r = c ? (int)c->a : -1;
	pthread_mutex_unlock(&g_pool_mu);
	return r;
}

void gf_cu_choice_store(enum gf_cu_choice what, int dev, uint32_t channels, uint32_t max_block,
			uint32_t taps_pad, int taken)
{
	const struct memo fresh = {0, 0, 0, 0, 0, (uint32_t)(taken != 0), 0};
	pthread_mutex_lock(&g_pool_mu);
	memo_find(g_choice[what], dev, channels, max_block, taps_pad, &fresh);
	pthread_mutex_unlock(&g_pool_mu);
}

void gf_cu_release_caches(void)
{
	pthread_mutex_lock(&g_pool_mu);
	for (int i = 0; i < GF_CU_HOST_CACHE; i++)
		if (g_host[i].p && !g_host[i].used) {
			cudaFreeHost(g_host[i].p);
			g_host[i].p = NULL;
		}
	for (int i = 0; i < GF_CU_PLAN_CACHE; i++)
		if (g_plans[i].made && !g_plans[i].used) {
			cufftDestroy(g_plans[i].h);
			g_plans[i].made = 0;
		}
	struct retired *r = take_retired();
	pthread_mutex_unlock(&g_pool_mu);
	free_retired(r);
	(void)cudaGetLastError();
}
