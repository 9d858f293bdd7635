/*
 * The persistent kernel steps aside before another instance is built on its
 * device. While it is resident, building queues behind a kernel that never
 * ends: a new cuFFT plan, cudaFree, cudaFreeHost and more wait for it
 * (docs/cuda.md), so a reload under it would hang the control thread. So
 * create() first asks every instance whose kernel is resident on the device
 * to hand over to the staged path, and waits (bounded) until each kernel has
 * ended:
 *
 *  - the audio thread does it at the end of its next call (finish): the
 *    kernel copies its newest taps_pad-1 frames of history into device
 *    memory and stops, one round trip within the call's deadline; the staged
 *    line is loaded from that copy, and every later call runs staged (a call
 *    that arrives while a control thread hands it over is refused with
 *    GF_E_BUSY rather than waited: the engine counts the block late);
 *  - an instance that no thread is calling (the stream stopped, or a test
 *    that builds two instances on one thread) is taken over by the control
 *    thread: a compare-and-swap on its state keeps the two threads apart;
 *    one whose call failed or missed its deadline (the engine calls it no
 *    more) is only stopped.
 *
 * The new instance then starts its own kernel. The old one streams on the
 * staged path until the crossfade retires it. An instance whose kernel does
 * not answer stays resident (its work is in doubt, as after any missed
 * deadline) and create() fails with GF_E_BUSY instead of hanging.
 */
#include <pthread.h>
#include <time.h>

#include "clock.h"
#include "cu_fused.cuh"
#include "cu_persist.cuh"

#define PK_MAX 64
#define PK_WAIT_NS 500000000ull	 /* the longest create() waits for the kernels to end */
#define PK_IDLE_NS 25000000ull	 /* no call for this long: the instance is idle (a period of 1024 frames is 21 ms) */

static pthread_mutex_t g_pk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gf_cu_inst *g_pk[PK_MAX];

static int pk_load(const int *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

int gf_cu_pk_register(struct gf_cu_inst *in)
{
	__atomic_store_n(&in->pk_last_ns, gf_now_ns(), __ATOMIC_RELAXED);
	pthread_mutex_lock(&g_pk_mu);
	for (int i = 0; i < PK_MAX && !in->pk_registered; i++)
		if (!g_pk[i]) {
			g_pk[i] = in;
			__atomic_store_n(&in->pk_registered, 1, __ATOMIC_RELEASE);
		}
	pthread_mutex_unlock(&g_pk_mu);
	return in->pk_registered ? 0 : -1;
}

void gf_cu_pk_unregister(struct gf_cu_inst *in)
{
	/* Mostly a step-aside has done it already: then no wait for the lock,
	 * which a step-aside holds while it waits for kernels (PK_WAIT_NS at most). */
	if (!__atomic_load_n(&in->pk_registered, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&g_pk_mu);
	for (int i = 0; i < PK_MAX && in->pk_registered; i++)
		if (g_pk[i] == in) {
			g_pk[i] = NULL;
			__atomic_store_n(&in->pk_registered, 0, __ATOMIC_RELEASE);
		}
	pthread_mutex_unlock(&g_pk_mu);
}

/* The kernel's history into the staged line, the kernel stopped: only
 * enqueued work (a memset and one kernel on s_comp) besides the round trip. */
static int pk_leave(struct gf_cu_inst *in, uint64_t deadline_ns)
{
	const float *hist = NULL;
	uint32_t n = 0;
	int err = gf_cu_persist_handover(in->persist, deadline_ns, &hist, &n, &in->eb);
	if (!err && in->hybrid) /* an FFT instance: the staged FFT path goes on at the same position */
		return gf_cu_hybrid_leave(in->hybrid, in, hist, n, deadline_ns);
	if (!err)
		err = gf_cu_line_reset(&in->line, in->channels, in->s_comp, &in->eb);
	if (!err)
		err = gf_cu_line_load(&in->line, in->channels, hist, n, in->s_comp, &in->eb);
	if (!err && in->live) /* the fused path, where it was built, goes on from there */
		err = gf_cu_live_load(in->live, hist, n, in->s_comp, &in->eb);
	return err;
}

/*
 * No wait here: a control thread handing an idle instance over is a thread
 * of lower priority than a real-time worker, and spinning on it could keep
 * it from running. The call is refused instead (GF_E_BUSY: nothing
 * submitted, the engine tries again at the next block, by which time the
 * round trip of the handover is long done).
 */
int gf_cu_pk_take(struct gf_cu_inst *in)
{
	int st = GF_CU_PK_IDLE;
	if (__atomic_compare_exchange_n(&in->pk_state, &st, GF_CU_PK_CALL, false, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE))
		return 1;
	if (st == GF_CU_PK_LEFT)
		return 0;
	gf_errbuf_set(&in->eb, "cuda: the persistent kernel is being handed over to the staged path");
	return -1;
}

int gf_cu_pk_end_call(struct gf_cu_inst *in, int err, uint64_t deadline_ns)
{
	int left = 0;
	if (err == GF_E_TIMEOUT) /* late: the call is still the kernel's, collected later */
		return err;
	/* A handover is one more round trip: not after the deadline (a late call's
	 * collection); a later call, or an idle step-aside, does it. */
	if (!err && __atomic_load_n(&in->pk_ask, __ATOMIC_ACQUIRE) && gf_now_ns() < deadline_ns) {
		err = pk_leave(in, deadline_ns);
		if (err == GF_E_TIMEOUT) { /* the kernel's state is the handover's: no going back */
			gf_errbuf_set(&in->eb, "cuda: the persistent kernel's handover missed its deadline");
			err = GF_E_CUDA;
		}
		left = 1;
	}
	if (err) { /* the engine calls it no more: a step-aside may stop its kernel */
		__atomic_store_n(&in->pk_state, GF_CU_PK_LOST, __ATOMIC_RELEASE);
		return err;
	}
	__atomic_store_n(&in->pk_last_ns, gf_now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&in->pk_state, left ? GF_CU_PK_LEFT : GF_CU_PK_IDLE, __ATOMIC_RELEASE);
	return 0;
}

/* Take @p in's kernel from an owner that lost it (stop it) or has been idle
 * for PK_IDLE_NS (hand it over here). @return 1 if taken, with *err the outcome. */
static int pk_try_take(struct gf_cu_inst *in, uint64_t deadline_ns, int *err)
{
	int st = GF_CU_PK_LOST;
	if (__atomic_compare_exchange_n(&in->pk_state, &st, GF_CU_PK_LEAVING, false, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE)) {
		*err = gf_cu_persist_stop(in->persist, deadline_ns, &in->eb);
		return 1;
	}
	uint64_t last = __atomic_load_n(&in->pk_last_ns, __ATOMIC_RELAXED);
	if (st != GF_CU_PK_IDLE || gf_now_ns() - last <= PK_IDLE_NS ||
	    !__atomic_compare_exchange_n(&in->pk_state, &st, GF_CU_PK_LEAVING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return 0;
	*err = pk_leave(in, deadline_ns);
	return 1;
}

int gf_cu_pk_stop_given_up(struct gf_cu_inst *in, uint64_t deadline_ns)
{
	int st = __atomic_load_n(&in->pk_state, __ATOMIC_ACQUIRE);
	if (st == GF_CU_PK_CALL || st == GF_CU_PK_IDLE) /* its owner calls it no more */
		__atomic_compare_exchange_n(&in->pk_state, &st, GF_CU_PK_LOST, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	st = GF_CU_PK_LOST; /* claimed as a step-aside claims it: one stopper at a time */
	if (__atomic_compare_exchange_n(&in->pk_state, &st, GF_CU_PK_LEAVING, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		int err = gf_cu_persist_stop(in->persist, deadline_ns, &in->eb);
		__atomic_store_n(&in->pk_state, err ? GF_CU_PK_LOST : GF_CU_PK_LEFT, __ATOMIC_RELEASE);
	}
	if (pk_load(&in->pk_state) != GF_CU_PK_LEFT)
		return 0;
	return gf_cu_persist_reap(in->persist, gf_now_ns()) == 0;
}

/* One pass over the registered kernels of @p dev: take idle and lost ones,
 * reap ended ones. @return how many are still resident; *stuck: of which are
 * known never to end (they did not answer). */
static int pk_pass(int dev, uint64_t deadline_ns, int *stuck)
{
	int resident = 0;
	*stuck = 0;
	for (int i = 0; i < PK_MAX; i++) {
		struct gf_cu_inst *in = g_pk[i];
		if (!in || in->dev != dev || !in->persist)
			continue;
		int err = 0;
		if (!__atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE) &&
		    pk_try_take(in, deadline_ns, &err)) {
			if (err) { /* in doubt, resident for good */
				__atomic_store_n(&in->stuck_kernel, 1, __ATOMIC_RELEASE);
				gf_cu_doubt(in);
			} else {
				__atomic_store_n(&in->pk_state, GF_CU_PK_LEFT, __ATOMIC_RELEASE);
			}
		}
		if (__atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE)) {
			resident++;
			++*stuck;
			continue;
		}
		if (pk_load(&in->pk_state) != GF_CU_PK_LEFT || gf_cu_persist_reap(in->persist, gf_now_ns())) {
			resident++;
			continue;
		}
		g_pk[i] = NULL; /* ended: nothing more to ask of it */
		__atomic_store_n(&in->pk_registered, 0, __ATOMIC_RELEASE);
	}
	return resident;
}

int gf_cu_pk_step_aside(int dev, struct gf_errbuf *eb)
{
	pthread_mutex_lock(&g_pk_mu);
	int any = 0;
	for (int i = 0; i < PK_MAX; i++)
		if (g_pk[i] && g_pk[i]->dev == dev) {
			__atomic_store_n(&g_pk[i]->pk_ask, 1, __ATOMIC_RELEASE);
			any = 1;
		}
	int resident = 0, stuck = 0;
	if (any) {
		uint64_t deadline = gf_now_ns() + PK_WAIT_NS;
		const struct timespec step = {0, 100000};
		while ((resident = pk_pass(dev, deadline, &stuck)) > stuck && gf_now_ns() < deadline)
			nanosleep(&step, NULL);
	}
	pthread_mutex_unlock(&g_pk_mu);
	if (resident) {
		gf_errbuf_set(eb,
			      "cuda: %d persistent kernel%s on GPU %d did not hand over to the staged path within "
			      "%llu ms: building beside %s would wait for good",
			      resident, resident == 1 ? "" : "s", dev, PK_WAIT_NS / 1000000ull,
			      resident == 1 ? "it" : "them");
		return GF_E_BUSY;
	}
	return 0;
}
