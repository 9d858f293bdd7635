/* The block-time histogram: each reader's window is its own. A fast reader
 * (the 200 ms health poll) taking windows must not shorten a slow reader's
 * (the 60 s stats line): the slow one still sees every duration added since
 * its previous window, with the right median, p99 and exact maximum. */
#include <stdio.h>

#include "error.h"
#include "testutil.h"
#include "timehist.h"

static void check_near(double got, double want)
{
	/* bins are 1/32 octave wide: 2.2 % around the centre */
	CHECK(got > want * 0.97 && got < want * 1.03);
}

int main(void)
{
	struct gf_timehist *h;
	CHECK_OK(gf_timehist_new(&h));
	struct gf_timehist_summary fast, slow;
	uint64_t fast_count = 0;
	/* 1000 durations: 980 of 100 us, then 20 of 1000 us (the top 2 %), one of 5 ms. */
	for (int i = 0; i < 1001; i++) {
		uint64_t ns = i < 980 ? 100000u : i < 1000 ? 1000000u : 5000000u;
		gf_timehist_add(h, ns);
		if (i % 10 == 9) {
			gf_timehist_window(h, 0, &fast);
			fast_count += fast.count;
			CHECK(fast.count == 10);
		}
	}
	gf_timehist_window(h, 0, &fast);
	fast_count += fast.count;
	CHECK(fast_count == 1001);
	CHECK(fast.count == 1 && fast.max_us == 5000.0); /* the fast window holds only the last */

	gf_timehist_window(h, 1, &slow);
	printf("slow window: %llu durations, median %.1f us, p99 %.1f us, max %.1f us\n",
	       (unsigned long long)slow.count, slow.median_us, slow.p99_us, slow.max_us);
	CHECK(slow.count == 1001);
	check_near(slow.median_us, 100.0);
	check_near(slow.p99_us, 1000.0);
	CHECK(slow.max_us == 5000.0);

	/* Empty windows after that, for both readers; then each sees the next one. */
	gf_timehist_window(h, 1, &slow);
	gf_timehist_window(h, 0, &fast);
	CHECK(slow.count == 0 && slow.median_us == 0.0 && slow.max_us == 0.0 && fast.count == 0);
	gf_timehist_add(h, 200000u);
	gf_timehist_window(h, 0, &fast);
	gf_timehist_window(h, 1, &slow);
	CHECK(fast.count == 1 && slow.count == 1 && slow.max_us == 200.0);
	check_near(slow.median_us, 200.0);
	/* A reader beyond the supported ones gets an empty summary, not memory corruption. */
	gf_timehist_window(h, GF_TIMEHIST_READERS, &slow);
	CHECK(slow.count == 0);
	gf_timehist_free(h);
	puts("test_timehist: ok");
	return 0;
}
