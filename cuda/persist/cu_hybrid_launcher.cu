/*
 * The launcher thread of an FFT instance's tail (cu_hybrid.cu describes the
 * path): the audio thread hands it each completed segment through a
 * lock-free queue, and it launches the segment's chain on the side stream,
 * so that the audio thread launches nothing and wakes no one. It polls the
 * queue eight times a segment. A drain (control thread, or the audio thread
 * between calls) launches what the launcher has not claimed and waits,
 * bounded, only for a launch in hand.
 */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "cu_hybrid.cuh"

extern "C" {
#include "log.h"
}

static void nap(uint64_t ns)
{
	struct timespec t = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	while (nanosleep(&t, &t) != 0 && errno == EINTR) {
	}
}

/* The time between two segments handed over, over 8: the next poll's wait. */
static uint64_t poll_period(uint64_t since_last_ns)
{
	uint64_t p = since_last_ns / 8;
	return p < HY_POLL_MIN_NS ? HY_POLL_MIN_NS : p > HY_POLL_MAX_NS ? HY_POLL_MAX_NS : p;
}

/* Claim the oldest segment not yet claimed. @return 1 and its index in @p slot, or 0. */
static int claim_one(struct gf_cu_hybrid *h, uint64_t *slot)
{
	uint64_t c = __atomic_load_n(&h->q_claim, __ATOMIC_ACQUIRE);
	while (c != __atomic_load_n(&h->q_head, __ATOMIC_ACQUIRE))
		if (__atomic_compare_exchange_n(&h->q_claim, &c, c + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			*slot = c;
			return 1;
		}
	return 0;
}

void *gf_cu_hybrid_launcher_main(void *arg)
{
	struct gf_cu_hybrid *h = (struct gf_cu_hybrid *)arg;
	int err = gf_cu_use_device(h->dev, &h->leb);
	uint64_t last_ns = 0, wait_ns = HY_POLL_FIRST_NS, slot;
	while (!__atomic_load_n(&h->quit, __ATOMIC_ACQUIRE)) {
		if (!claim_one(h, &slot)) {
			nap(wait_ns);
			continue;
		}
		uint64_t now = gf_now_ns();
		if (last_ns)
			wait_ns = poll_period(now - last_ns);
		last_ns = now;
		uint64_t hold = __atomic_exchange_n(&h->hold_ns, 0, __ATOMIC_ACQ_REL);
		if (hold) /* a launcher stuck in a launch: the segment is claimed, not done */
			nap(hold);
		do {
			if (!err)
				err = gf_cu_hybrid_stall_if_asked(h, &h->leb);
			if (!err)
				err = gf_cu_hybrid_chain(h, h->q[slot % HY_QUEUE], &h->leb);
			if (err)
				__atomic_store_n(&h->thr_err, err, __ATOMIC_RELEASE);
			__atomic_store_n(&h->q_done, slot + 1, __ATOMIC_RELEASE);
		} while (claim_one(h, &slot));
	}
	return NULL;
}

/* Audio thread: segment k is complete; the launcher chains it. Never waits, makes no syscall. */
int gf_cu_hybrid_request(struct gf_cu_hybrid *h, int64_t k, struct gf_errbuf *eb)
{
	uint64_t head = h->q_head;
	if (head - __atomic_load_n(&h->q_done, __ATOMIC_ACQUIRE) >= HY_QUEUE) {
		gf_errbuf_set(eb, "cuda: the FFT tail's launcher fell %d segments behind", HY_QUEUE);
		return GF_E_TIMEOUT;
	}
	h->q[head % HY_QUEUE] = k;
	__atomic_store_n(&h->q_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Before the caller uses the side stream: every segment handed over is launched, by
 * @p deadline_ns. What the launcher has not claimed is launched here (it may be asleep
 * for a poll period, longer than a block); the wait is only for a chain it is launching,
 * in short sleeps, never a spin: the caller may be a real-time thread above the
 * launcher's priority, which a spin could keep from finishing the launch.
 */
int gf_cu_hybrid_drain(struct gf_cu_hybrid *h, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	const uint64_t head = h->q_head;
	uint64_t from = __atomic_exchange_n(&h->q_claim, head, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&h->q_done, __ATOMIC_ACQUIRE) != from) {
		if (gf_now_ns() >= deadline_ns) {
			gf_errbuf_set(eb, "cuda: the FFT tail's launcher did not finish a launch in time");
			return GF_E_TIMEOUT;
		}
		nap(HY_WAIT_STEP_NS);
	}
	int err = __atomic_load_n(&h->thr_err, __ATOMIC_ACQUIRE);
	if (err) {
		gf_errbuf_set(eb, "%s", h->leb.msg);
		return err;
	}
	for (; from != head; from++)
		GF_RET(gf_cu_hybrid_chain(h, h->q[from % HY_QUEUE], eb));
	__atomic_store_n(&h->q_done, head, __ATOMIC_RELEASE);
	return 0;
}

/* Free: ask the launcher to end and wait a bounded time. @return 0, or -1 (it still runs). */
int gf_cu_hybrid_launcher_stop(struct gf_cu_hybrid *h)
{
	if (!h->thr_started)
		return 0;
	__atomic_store_n(&h->quit, 1, __ATOMIC_RELEASE);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += HY_JOIN_NS / 1000000000ll;
	if (pthread_timedjoin_np(h->thr, NULL, &until) != 0) {
		pthread_detach(h->thr);
		gf_warn("cuda: the FFT tail's launcher thread did not end: abandoned with its buffers");
		return -1;
	}
	h->thr_started = 0;
	return 0;
}
