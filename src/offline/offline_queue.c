/*
 * The pipeline's chunk queues (free, decoded, filtered) and its one failure,
 * under the pipeline's one mutex and condition variable: what the reader,
 * the engine threads (offline_pipeline.c, offline_stripe.c) and the writer
 * share. Not the RT path: a mutex and a condition variable are the simplest
 * correct choice.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "deadline.h"
#include "offline_internal.h"

#define STOP_POLL_NS 100000000L /* the engine thread looks at o->stop every 100 ms */

static void fifo_push(struct gf_offline_fifo *q, uint32_t i)
{
	q->idx[(q->head + q->count++) % q->cap] = i;
}

static uint32_t fifo_pop(struct gf_offline_fifo *q)
{
	uint32_t i = q->idx[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return i;
}

/* Pop the entry holding chunk @p seq (it moves to the head first): 1 if found. */
static int fifo_pop_seq(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, uint64_t seq, uint32_t *idx)
{
	for (uint32_t k = 0; k < q->count; k++) {
		uint32_t *e = &q->idx[(q->head + k) % q->cap];
		if (p->chunk[*e].seq != seq)
			continue;
		uint32_t t = *e;
		*e = q->idx[q->head];
		q->idx[q->head] = t;
		*idx = fifo_pop(q);
		return 1;
	}
	return 0;
}

void gf_offline_queues_reset(struct gf_offline_pipeline *p)
{
	struct gf_offline_fifo *q[3] = {&p->free_q, &p->decoded_q, &p->filtered_q};
	for (int k = 0; k < 3; k++)
		q[k]->head = q[k]->count = 0;
	for (uint32_t i = 0; i < p->nchunks; i++)
		fifo_push(&p->free_q, i);
}

/* Record the first failure and wake everyone. Caller holds mu. */
void gf_offline_fail_locked(struct gf_offline_pipeline *p, int err, const struct gf_errbuf *eb)
{
	if (!p->failed) {
		p->failed = err;
		p->eb = *eb;
	}
	pthread_cond_broadcast(&p->cv);
}

void gf_offline_fail(struct gf_offline_pipeline *p, int err, const struct gf_errbuf *eb)
{
	pthread_mutex_lock(&p->mu);
	gf_offline_fail_locked(p, err, eb);
	pthread_mutex_unlock(&p->mu);
}

static int stop_requested(const struct gf_offline_pipeline *p)
{
	return p->o->stop && atomic_load(p->o->stop);
}

int gf_offline_take(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, const int *done, int poll_stop,
		    int64_t seq, uint32_t *idx)
{
	int r;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (poll_stop && stop_requested(p)) {
			struct gf_errbuf eb;
			gf_errbuf_set(&eb, "interrupted: %s was not written", p->o->output);
			gf_offline_fail_locked(p, GF_E_INTERRUPTED, &eb);
		}
		if (p->failed) {
			r = -1;
			break;
		}
		if (seq < 0 && q->count) {
			*idx = fifo_pop(q);
			r = 1;
			break;
		}
		if (seq >= 0 && fifo_pop_seq(p, q, (uint64_t)seq, idx)) {
			r = 1;
			break;
		}
		if (done && *done) {
			r = 0;
			break;
		}
		if (poll_stop) {
			struct timespec ts = gf_deadline_in(CLOCK_MONOTONIC, STOP_POLL_NS);
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		} else {
			pthread_cond_wait(&p->cv, &p->mu);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return r;
}

int gf_offline_take_seq(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, const int *done,
			uint64_t seq, uint32_t *idx)
{
	return gf_offline_take(p, q, done, 0, (int64_t)seq, idx);
}

void gf_offline_give(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, uint32_t idx)
{
	pthread_mutex_lock(&p->mu);
	fifo_push(q, idx);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void gf_offline_set_done(struct gf_offline_pipeline *p, int *flag)
{
	pthread_mutex_lock(&p->mu);
	*flag = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}
