/* Whose a late block is (thread_use.h): the live worker's counters
 * late_blocks_host and late_blocks_swap_host rest on this rule.
 *
 * Checked, each on a span that overran its "period":
 * - spinning alone on a CPU: the CPU time is the span's, so the overrun is
 *   the work's (not the host's);
 * - sleeping: a voluntary switch, so the work's however little CPU it used
 *   (a lock, I/O, a GPU wait in the audio path must never be excused);
 * - spinning on a CPU shared with another spinning thread: runnable, never
 *   blocked, CPU time well under the span: the host's. */
#define _GNU_SOURCE /* sched_getcpu, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "testutil.h"
#include "thread_use.h"

/* Spin for @p ns of wall time (vDSO clock reads only: no syscall, no switch). */
static void spin_ns(uint64_t ns)
{
	uint64_t end = gf_now_ns() + ns;
	while (gf_now_ns() < end)
		;
}

static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
}

static atomic_int rival_state; /* 1 running, 2 asked to stop */
static int rival_cpu;

static void *rival_main(void *arg)
{
	(void)arg;
	pin_to(rival_cpu);
	atomic_store(&rival_state, 1);
	while (atomic_load(&rival_state) == 1)
		;
	return NULL;
}

static void alone_spinning(void)
{
	struct gf_thread_use a = gf_thread_use_now(), b;
	uint64_t t0 = gf_now_ns();
	do /* 30 ms of its own CPU time, however much the host steals meanwhile */
		b = gf_thread_use_now();
	while (b.cpu_ns - a.cpu_ns < 30000000u);
	uint64_t wall = gf_now_ns() - t0;
	printf("alone: wall %.1f ms, cpu %.1f ms, blocked %ld\n", wall / 1e6, (b.cpu_ns - a.cpu_ns) / 1e6,
	       b.blocked - a.blocked);
	CHECK(b.cpu_ns > a.cpu_ns);
	CHECK(!gf_thread_use_late_by_host(a, b, 10000000u)); /* CPU time alone overran 10 ms */
}

static void sleeping(void)
{
	struct gf_thread_use a = gf_thread_use_now();
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	struct gf_thread_use b = gf_thread_use_now();
	printf("sleeping: cpu %.3f ms, blocked %ld\n", (b.cpu_ns - a.cpu_ns) / 1e6, b.blocked - a.blocked);
	CHECK(b.blocked > a.blocked);
	CHECK(!gf_thread_use_late_by_host(a, b, 10000000u));
}

static void sharing_a_cpu(void)
{
	rival_cpu = sched_getcpu();
	CHECK(rival_cpu >= 0);
	pin_to(rival_cpu);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, rival_main, NULL) == 0);
	while (atomic_load(&rival_state) != 1)
		sched_yield();
	struct gf_thread_use a = gf_thread_use_now();
	uint64_t t0 = gf_now_ns();
	spin_ns(200000000u);
	uint64_t wall = gf_now_ns() - t0;
	struct gf_thread_use b = gf_thread_use_now();
	atomic_store(&rival_state, 2);
	CHECK(pthread_join(t, NULL) == 0);
	double cpu = (double)(b.cpu_ns - a.cpu_ns);
	printf("sharing: wall %.1f ms, cpu %.1f ms, blocked %ld\n", wall / 1e6, cpu / 1e6,
	       b.blocked - a.blocked);
	CHECK(cpu < 0.75 * (double)wall);		   /* the rival had its share */
	CHECK(gf_thread_use_late_by_host(a, b, wall - 1)); /* overran by its wall time, not its CPU */
}

int main(void)
{
	alone_spinning();
	sleeping();
	sharing_a_cpu();
	printf("test_thread_use: ok\n");
	return 0;
}
