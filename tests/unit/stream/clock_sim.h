/**
 * @file clock_sim.h
 * A deterministic simulation of two device clocks around the real rate
 * matching (live_clock.c), for test_live_clock: the real capture and
 * playback callbacks in virtual time, with jitter, and a worker that stalls
 * on cue (underruns). What the loop does is measured on the played audio
 * itself, not on the loop's own numbers: the input is two quadrature tones,
 * so every output frame tells which (fractional) capture position it plays.
 */
#ifndef GPUFIR_TESTS_CLOCK_SIM_H
#define GPUFIR_TESTS_CLOCK_SIM_H

#include <stdint.h>

#define CLOCK_SIM_EVENTS 4

enum clock_sim_kind {
	SIM_STALL = 1, /* the worker stalls for the latency plus a period: an underrun */
	SIM_LOSE_PLAY, /* the playback device loses `len` seconds (no callbacks, frames never asked for) */
	SIM_LOSE_CAP,  /* the capture device loses `len` seconds (frames never delivered) */
};

struct clock_sim_event {
	enum clock_sim_kind kind;
	double at, len; /* seconds; a stall's length is set by the simulation */
};

struct clock_sim_cfg {
	uint32_t n_cap, n_play; /* device periods, frames */
	uint32_t block;		/* the worker's block */
	double ppm;		/* playback clock's rate against capture's (48 kHz), parts per million */
	double jitter_s;	/* every callback comes up to this late (uniform) */
	double spike_s;		/* one callback in 200 comes this much later still */
	double seconds;		/* of audio */
	double lock_s;		/* lock-in: the steady state is measured from here */
	struct clock_sim_event ev[CLOCK_SIM_EVENTS]; /* in time order, all before the last 15 s */
	int events;
	uint64_t seed;
};

struct clock_sim_result {
	uint32_t latency;	    /* the target delay the stream was synced at, frames */
	double lock_dev;	    /* largest |pitch error| before lock_s ... */
	double lock_ms;		    /* ... and when it was last over 1e-3 */
	double steady_dev;	    /* largest |pitch error| from lock_s to the first event */
	double after_dev;	    /* largest |pitch error| from the end of any event on */
	double after_settle_ms;	    /* longest time from an event's end until |pitch error| < 1e-3 for good */
	double any_dev;		    /* largest |pitch error| anywhere after lock_s */
	double delay_settled;	    /* delay of the first window after lock_s, capture frames */
	double delay_lo, delay_hi;  /* the delay's range after lock_s (but within 0.6 s of an event), less
				       delay_settled */
	double ratio_ppm;	    /* the loop's own measure at the end, ppm */
	double pitch_ppm;	    /* the played ratio over the last 15 s, ppm */
	uint64_t underflow;	    /* output frames played as silence (underruns, counted) */
	uint64_t overflow;	    /* frames the worker found no room for in the output ring */
	uint64_t skipped, inserted; /* capture frames re-centring skipped, inserted (the stats) */
	uint32_t windows, glitches; /* 10 ms windows after lock_s; of them with a gap or a jump */
	double stall_s;		    /* how long each stall lasted */
};

/** Run one case; prints nothing. */
void clock_sim_run(const struct clock_sim_cfg *cfg, struct clock_sim_result *res);

#endif
