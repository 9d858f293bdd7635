/* Live stream: opens the devices and the recording, owns the rings and the
 * threads, starts and stops them. Control thread only; the audio path is in
 * live_audio.c (callbacks) and live_worker.c (worker), stats and health in
 * live_health.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "deadline.h"
#include "live_internal.h"
#include "log.h"
#include "pinned.h"
#include "rt.h"
#include "test_hook.h"

#define FIRST_CALLBACK_MS 2000 /* gf_live_start waits this long for the device to start */
#define WARM_UP_MS 5000	       /* longest wait for the worker's warm-up blocks */
#define JOIN_MS 1000	       /* gf_live_stop waits this long for the worker, then abandons it */

/* Stopped streams whose worker would not stop: kept reachable here, never
 * freed (the worker may still touch them). Control thread. */
static struct gf_live *abandoned_lives;

/* Capture channels (default 2) and playback channels: the engine's output
 * (a mixer's M), which output.channels may name but not contradict. */
static int channels_of(const struct gf_live_params *p, const struct gf_engine *engine, struct gf_live *l,
		       struct gf_errbuf *eb)
{
	uint32_t in = p->input.channels ? p->input.channels : 2;
	uint32_t eng_out = engine ? gf_engine_out_channels(engine) : in;
	if (p->output.channels && p->output.channels != eng_out) {
		gf_errbuf_set(eb, "output.channels = %u: the filter writes %u (%s); leave it out or set %u",
			      p->output.channels, eng_out,
			      eng_out == in ? "as many as input.channels" : "the mixer's outputs", eng_out);
		return GF_E_CONFIG;
	}
	l->channels = in;
	l->out_channels = p->output.channels ? p->output.channels : eng_out;
	return 0;
}

static void stream_params(PaStreamParameters *p, PaDeviceIndex d, uint32_t ch, int output)
{
	const PaDeviceInfo *di = Pa_GetDeviceInfo(d);
	memset(p, 0, sizeof(*p));
	p->device = d;
	p->channelCount = (int)ch;
	p->sampleFormat = paFloat32;
	p->suggestedLatency = output ? di->defaultLowOutputLatency : di->defaultLowInputLatency;
}

/* One side alone: enough channels, and the rate. Names the device in errors. */
static int check_side(const PaStreamParameters *p, int output, double rate, const char *desc,
		      struct gf_errbuf *eb)
{
	const PaDeviceInfo *di = Pa_GetDeviceInfo(p->device);
	int max = output ? di->maxOutputChannels : di->maxInputChannels;
	if (p->channelCount > max) {
		gf_errbuf_set(eb, "%s device %s has %d %s channels; %d requested",
			      output ? "output" : "input", desc, max, output ? "output" : "input",
			      p->channelCount);
		return GF_E_AUDIO;
	}
	PaError e = Pa_IsFormatSupported(output ? NULL : p, output ? p : NULL, rate);
	if (e != paFormatIsSupported) {
		gf_errbuf_set(eb,
			      "%s device %s cannot run at %.0f Hz with %d channels of float32: %s "
			      "(its default rate is %.0f Hz)",
			      output ? "output" : "input", desc, rate, p->channelCount, Pa_GetErrorText(e),
			      di->defaultSampleRate);
		return GF_E_RATE;
	}
	return 0;
}

/* Find the devices, settle rate and channels, decide duplex or two streams. */
static int open_devices(struct gf_live *l, const struct gf_live_params *p, PaStreamParameters *in,
			PaStreamParameters *out, struct gf_errbuf *eb)
{
	PaDeviceIndex din, dout = paNoDevice;
	int err = gf_live_find_device(&p->input, 0, &din, eb);
	if (!err && l->playback)
		err = gf_live_find_device(&p->output, 1, &dout, eb);
	if (err)
		return err;
	gf_live_describe_device(din, l->in_desc, sizeof(l->in_desc));
	const PaHostApiInfo *ai = Pa_GetHostApiInfo(Pa_GetDeviceInfo(din)->hostApi);
	l->jack = ai && ai->type == paJACK;
	l->rate = p->sample_rate ? p->sample_rate : (uint32_t)Pa_GetDeviceInfo(din)->defaultSampleRate;
	stream_params(in, din, l->channels, 0);
	if ((err = check_side(in, 0, l->rate, l->in_desc, eb)))
		return err;
	if (!l->playback)
		return 0;
	gf_live_describe_device(dout, l->out_desc, sizeof(l->out_desc));
	stream_params(out, dout, l->out_channels, 1);
	if ((err = check_side(out, 1, l->rate, l->out_desc, eb)))
		return err;
	/* One clock only for one device, or a server with one graph clock
	 * (JACK, PipeWire's JACK): two ALSA cards on one host API have two. */
	l->duplex = (din == dout || l->jack) &&
		    Pa_GetDeviceInfo(din)->hostApi == Pa_GetDeviceInfo(dout)->hostApi &&
		    Pa_IsFormatSupported(in, out, l->rate) == paFormatIsSupported;
	/* tests: the path of unrelated devices */
	if (l->duplex && gf_test_hook_value("GPUFIR_LIVE_TWO_STREAMS", "live") == 1)
		l->duplex = 0;
	else if (!l->duplex)
		gf_info("capture %s and playback %s do not share a clock: two streams, rate-matched by "
			"an adaptive resampler (docs/live.md)",
			l->in_desc, l->out_desc);
	return 0;
}

static int open_stream(struct gf_live *l, PaStream **s, const PaStreamParameters *in,
		       const PaStreamParameters *out, PaStreamCallback *cb, const char *desc,
		       struct gf_errbuf *eb)
{
	/* JACK calls back with its own period whatever we ask: take it as it
	 * comes. Elsewhere ask for the block size so device periods match blocks. */
	const PaDeviceInfo *di = Pa_GetDeviceInfo(in ? in->device : out->device);
	const PaHostApiInfo *ai = Pa_GetHostApiInfo(di->hostApi);
	unsigned long fpb = ai && ai->type == paJACK ? paFramesPerBufferUnspecified : l->block;
	PaError e = Pa_OpenStream(s, in, out, l->rate, fpb, paClipOff | paDitherOff, cb, l);
	if (e != paNoError) {
		*s = NULL;
		gf_errbuf_set(eb, "cannot open %s at %u Hz: %s", desc, l->rate, Pa_GetErrorText(e));
		return e == paDeviceUnavailable ? GF_E_NODEVICE : GF_E_AUDIO;
	}
	Pa_SetStreamFinishedCallback(*s, gf_live_finished_cb);
	return 0;
}

/* Bytes gf_ring_new takes for @p min_frames (a power of two of frames, page-rounded). */
static uint64_t ring_bytes(uint32_t min_frames, uint32_t channels)
{
	uint64_t cap = 1;
	while (cap < min_frames)
		cap <<= 1;
	return (cap * channels * sizeof(float) + 4095u) / 4096u * 4096u;
}

static int alloc_buffers(struct gf_live *l, struct gf_errbuf *eb)
{
	uint32_t b = l->block;
	uint32_t in_min = l->rate / 2 > 8 * b ? l->rate / 2 : 8 * b; /* half a second of slack */
	uint32_t out_min =
		2 * (2 * b + (2 + l->slack_max) * GF_LIVE_MAX_PERIOD); /* the largest latency twice over */
	uint32_t rec_min = l->rate > 8 * b ? l->rate : 8 * b;	       /* a second of slack for the disk */
	uint32_t ci = l->channels, co = l->out_channels;
	/* Every buffer here is locked (pinned.h): check the total against the budget first. */
	uint64_t need = ring_bytes(in_min, ci) + (l->playback ? ring_bytes(out_min, co) : 0) +
			(l->record_path ? ring_bytes(rec_min, co) : 0) + ring_bytes(b, ci) +
			ring_bytes(b, co);
	int err = gf_pinned_check(need, "the stream's buffers", eb);
	if (!err)
		err = gf_ring_new(&l->in_ring, in_min, ci);
	if (!err && l->playback)
		err = gf_ring_new(&l->out_ring, out_min, co);
	if (!err && l->record_path)
		err = gf_ring_new(&l->rec_ring, rec_min, co);
	if (!err)
		err = gf_timehist_new(&l->hist);
	if (err)
		return err;
	l->blk_in_bytes = (size_t)b * ci * sizeof(float);
	l->blk_out_bytes = (size_t)b * co * sizeof(float);
	l->blk_in = gf_pinned_alloc(l->blk_in_bytes);
	l->blk_out = gf_pinned_alloc(l->blk_out_bytes);
	if (!l->blk_in || !l->blk_out)
		return GF_E_NOMEM;
	if (sem_init(&l->wake, 0, 0) != 0)
		return GF_E_SYSTEM;
	l->sem_ready = 1;
	return 0;
}

static struct gf_live *live_alloc(void)
{
	struct gf_live *l = aligned_alloc(64, sizeof(*l)); /* cache-line aligned members */
	if (l) {
		memset(l, 0, sizeof(*l));
		l->slack = l->slack_max = 1;
		atomic_init(&l->slack_now, 1);
		atomic_init(&l->margin_min, INT32_MAX);
		l->margin_worst = INT32_MAX;
		l->xprev.margin = l->xcur.margin = INT32_MAX; /* no block yet: no margin */
	}
	return l;
}

/* No gain stage given: one at unity all the same, whose playback meters are
 * the stats' output peak and clipped samples (the worker scans once). */
static int own_gain(struct gf_live *l, struct gf_errbuf *eb)
{
	uint32_t ch = l->out_channels < GF_GAIN_MAX_CHANNELS ? l->out_channels : GF_GAIN_MAX_CHANNELS;
	int err = gf_gain_stage_new(&l->own_gain, ch, l->rate, 1.0f, 0, eb);
	if (err && !eb->msg[0])
		gf_errbuf_set(eb, "cannot allocate the output meters: %s", gf_strerror(err));
	l->gain = l->own_gain;
	return err;
}

int gf_live_new_detached(struct gf_live **out, uint32_t rate, uint32_t channels, uint32_t block, int playback,
			 const char *record_path, struct gf_engine *engine, struct gf_errbuf *eb)
{
	return gf_live_new_detached_io(out, rate, channels, channels, block, playback, record_path, engine,
				       eb);
}

int gf_live_new_detached_io(struct gf_live **out, uint32_t rate, uint32_t in_channels, uint32_t out_channels,
			    uint32_t block, int playback, const char *record_path, struct gf_engine *engine,
			    struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_live *l = live_alloc();
	if (!l)
		return GF_E_NOMEM;
	l->engine = engine;
	l->rate = rate;
	l->channels = in_channels;
	l->out_channels = out_channels;
	l->block = block;
	l->playback = l->duplex = playback;
	snprintf(l->in_desc, sizeof(l->in_desc), "(detached)");
	int err = 0;
	if (record_path && !(l->record_path = strdup(record_path)))
		err = GF_E_NOMEM;
	if (!err)
		err = alloc_buffers(l, eb);
	if (!err)
		err = own_gain(l, eb);
	if (!err && l->record_path)
		err = gf_recorder_new(&l->rec, l->record_path, l->rate, l->rec_ring, eb);
	if (err) {
		gf_live_free(l);
		return err;
	}
	*out = l;
	return 0;
}

void gf_live_set_suppress(struct gf_live *l, struct gf_suppress_bank *b)
{
	l->suppress = b;
}

void gf_live_set_tap(struct gf_live *l, struct gf_input_tap *t)
{
	l->tap = t;
}

void gf_live_set_gain(struct gf_live *l, struct gf_gain_stage *g)
{
	l->gain = g ? g : l->own_gain;
}

/* Buffers, the own meters where none were given, and the resampler where
 * two clocks meet: the same for every host. */
static int alloc_stream_state(struct gf_live *l, int one_clock, struct gf_errbuf *eb)
{
	int err = alloc_buffers(l, eb);
	if (err && !eb->msg[0])
		gf_errbuf_set(eb, "cannot allocate the audio buffers: %s", gf_strerror(err));
	if (!err && !l->gain)
		err = own_gain(l, eb);
	if (!err && l->playback && !l->duplex && !one_clock &&
	    (err = gf_live_clock_new(&l->clock, l->out_channels, l->rate)))
		gf_errbuf_set(eb, "cannot set up the resampler: %s", gf_strerror(err));
	return err;
}

/* PortAudio: devices by name or index, one duplex stream or two. */
static int open_portaudio(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	PaStreamParameters in, outp;
	if (gf_live_restart_required()) {
		gf_errbuf_set(eb, "the JACK server went away earlier and PortAudio cannot reconnect "
				  "within this process: restart gpufir");
		return GF_E_AUDIO;
	}
	int err = gf_live_pa_init(eb);
	if (!err)
		l->pa_ready = 1;
	if (!err)
		err = open_devices(l, p, &in, &outp, eb);
	/* Two streams on JACK still share the server's clock (forced two streams, tests). */
	if (!err)
		err = alloc_stream_state(l, l->jack, eb);
	if (!err && l->duplex)
		err = open_stream(l, &l->in_stream, &in, &outp, gf_live_duplex_cb, l->in_desc, eb);
	else if (!err)
		err = open_stream(l, &l->in_stream, &in, NULL, gf_live_capture_cb, l->in_desc, eb);
	if (!err && l->playback && !l->duplex)
		err = open_stream(l, &l->out_stream, NULL, &outp, gf_live_playback_cb, l->out_desc, eb);
	return err;
}

/* PipeWire: a stream from the default device and gpufir's own node (a source
 * or a sink), run by one duplex callback (live_pipewire.c); it always plays. */
static int open_pipewire(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	l->playback = l->duplex = 1;
	l->rate = p->sample_rate ? p->sample_rate : 48000;
	int err = alloc_stream_state(l, 1, eb);
	return err ? err : gf_live_pw_open(l, p, eb);
}

int gf_live_pw_wanted(const struct gf_live_endpoint *ep)
{
	return ep->host_api && strcasecmp(ep->host_api, "PipeWire") == 0;
}

int gf_live_new(struct gf_live **out, const struct gf_live_params *p, struct gf_engine *engine,
		struct gf_errbuf *eb)
{
	*out = NULL;
	if (p->block_frames < GF_LIVE_BLOCK_MIN || p->block_frames > GF_LIVE_BLOCK_MAX) {
		gf_errbuf_set(eb, "block_frames = %u: must be %u..%u", p->block_frames, GF_LIVE_BLOCK_MIN,
			      GF_LIVE_BLOCK_MAX);
		return GF_E_CONFIG;
	}
	struct gf_live *l = live_alloc();
	if (!l)
		return GF_E_NOMEM;
	l->engine = engine;
	l->suppress = p->suppress;
	l->tap = p->tap;
	l->gain = p->gain;
	l->block = p->block_frames;
	/* auto: from the tightest latency up to the most a fixed slack may be */
	l->slack_auto = p->latency_slack_auto;
	l->slack = l->slack_auto ? 0 : p->latency_slack;
	l->slack_max = l->slack_auto ? GF_LIVE_SLACK_MAX : l->slack;
	atomic_store(&l->slack_now, l->slack);
	l->playback = p->output.device != NULL || p->record_path == NULL;
	int err = channels_of(p, engine, l, eb);
	if (!err && p->record_path && !(l->record_path = strdup(p->record_path)))
		err = GF_E_NOMEM;
	if (!err && (gf_live_pw_wanted(&p->input) || gf_live_pw_wanted(&p->output)))
		err = open_pipewire(l, p, eb);
	else if (!err)
		err = open_portaudio(l, p, eb);
	if (!err && l->record_path)
		err = gf_recorder_new(&l->rec, l->record_path, l->rate, l->rec_ring, eb);
	if (err)
		goto fail;
	*out = l;
	return 0;
fail:
	gf_live_free(l);
	return err;
}

static void close_streams(struct gf_live *l)
{
	if (l->in_stream)
		Pa_CloseStream(l->in_stream);
	if (l->out_stream)
		Pa_CloseStream(l->out_stream);
	l->in_stream = l->out_stream = NULL;
}

void gf_live_free(struct gf_live *l)
{
	if (!l)
		return;
	gf_live_stop(l);
	gf_live_pw_close(l);
	if (!l->pa_wedged) { /* else PortAudio would block: leave its stream and state be */
		close_streams(l);
		if (l->pa_ready)
			gf_live_pa_term();
	}
	if (l->worker_abandoned) {
		/* The worker may still run (or wake) and use rings, buffers, the
		 * semaphore and the recorder: keep all of it. */
		l->next_abandoned = abandoned_lives;
		abandoned_lives = l;
		return;
	}
	gf_recorder_free(l->rec);
	if (l->sem_ready)
		sem_destroy(&l->wake);
	gf_pinned_free(l->blk_in, l->blk_in_bytes);
	gf_pinned_free(l->blk_out, l->blk_out_bytes);
	gf_timehist_free(l->hist);
	gf_live_clock_free(l->clock);
	gf_ring_free(l->in_ring);
	gf_ring_free(l->out_ring);
	gf_ring_free(l->rec_ring);
	gf_gain_stage_free(l->own_gain);
	free(l->record_path);
	free(l);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Wait for the first callbacks: they fix the latency (from the device period). */
static void wait_first_callback(struct gf_live *l)
{
	for (int ms = 0; ms < FIRST_CALLBACK_MS; ms++) {
		if (l->playback ? atomic_load_explicit(&l->latency_known, memory_order_acquire)
				: atomic_load_explicit(&l->cb_frames, memory_order_acquire) != 0)
			break;
		sleep_ms(1);
	}
	int cb = atomic_load(&l->cb_rt_prio);
	/* Below the device's audio thread, which must be able to preempt us. */
	atomic_store(&l->worker_rt_prio, gf_rt_set_fifo(l->worker, cb > 1 ? cb - 1 : GF_RT_WORKER_PRIO));
	uint32_t n = atomic_load(&l->cb_frames);
	if (!n) {
		gf_warn("live: %s has not called back within %d ms", l->in_desc, FIRST_CALLBACK_MS);
		return;
	}
	/* PipeWire: no device latency of PortAudio's (the graph's quantum: docs/live.md). */
	const PaStreamInfo *si = l->in_stream ? Pa_GetStreamInfo(l->in_stream) : NULL;
	const PaStreamInfo *so = l->out_stream ? Pa_GetStreamInfo(l->out_stream) : si;
	double dev_ms = 1000.0 * ((si ? si->inputLatency : 0) + (l->playback && so ? so->outputLatency : 0));
	if (l->playback) {
		uint32_t lat = atomic_load(&l->latency);
		gf_info("live: %s -> %s, %u Hz, %u ch in, %u out, block %u, device period %u: latency %u "
			"frames (%.2f ms) + device %.2f ms%s",
			l->in_desc, l->out_desc, l->rate, l->channels, l->out_channels, l->block, n, lat,
			1000.0 * lat / l->rate, dev_ms, l->duplex ? "" : " (two streams)");
	} else {
		gf_info("live: %s -> %s, %u Hz, %u ch in, %u out, block %u, device period %u (recording is "
			"aligned with the capture)",
			l->in_desc, l->record_path, l->rate, l->channels, l->out_channels, l->block, n);
	}
}

/* The worker runs a few silent blocks first; start the devices after that. */
static void wait_warm_up(struct gf_live *l)
{
	for (int ms = 0; ms < WARM_UP_MS && !atomic_load_explicit(&l->warm, memory_order_acquire); ms++)
		sleep_ms(1);
	if (!atomic_load(&l->warm))
		gf_warn("live: the engine took over %d ms for %d warm-up blocks", WARM_UP_MS,
			GF_LIVE_WARMUP_BLOCKS);
}

int gf_live_start(struct gf_live *l, struct gf_errbuf *eb)
{
	if (l->running || l->started_once) {
		gf_errbuf_set(eb, "live stream already started");
		return GF_E_INVAL;
	}
	l->started_once = 1;
	l->memory_locked = gf_rt_lock_memory();
	atomic_store(&l->wstate, GF_W_RUN);
	if (pthread_create(&l->worker, NULL, gf_live_worker_main, l) != 0) {
		gf_errbuf_set(eb, "cannot start the audio worker thread");
		return GF_E_SYSTEM;
	}
	l->worker_started = 1;
	l->running = 1;
	wait_warm_up(l);
	int err = l->rec ? gf_recorder_start(l->rec, eb) : 0;
	/* Playback first: it idles until capture begins, then joins at the right position. */
	PaError e = paNoError;
	if (!err && !l->in_stream && !l->pw) /* detached (tests): whoever calls the callbacks is the device */
		return 0;
	if (!err && l->pw)
		err = gf_live_pw_start(l, eb);
	else if (!err && l->out_stream && (e = Pa_StartStream(l->out_stream)) != paNoError)
		gf_errbuf_set(eb, "cannot start playback on %s: %s", l->out_desc, Pa_GetErrorText(e));
	else if (!err && (e = Pa_StartStream(l->in_stream)) != paNoError)
		gf_errbuf_set(eb, "cannot start %s: %s", l->in_desc, Pa_GetErrorText(e));
	if (!err && e != paNoError)
		err = e == paDeviceUnavailable ? GF_E_NODEVICE : GF_E_AUDIO;
	if (err) {
		gf_live_stop(l);
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &l->poll_time);
	wait_first_callback(l);
	return 0;
}

/* Set once PortAudio holds a JACK stream it cannot release (see below). */
static atomic_int pa_wedged;

int gf_live_restart_required(void)
{
	return atomic_load(&pa_wedged);
}

/* PortAudio's JACK host API cannot stop, close or terminate a stream after
 * the JACK server went away: each of those waits for a JACK cycle that never
 * comes (ten minutes, then fails). Such a stream is left alone: the worker and
 * the recording still stop cleanly, and gf_live_new then reports that only a
 * process restart reconnects (systemd's Restart= does that). */
static int jack_server_gone(struct gf_live *l)
{
	if (!l->jack)
		return 0;
	PaStream *streams[2] = {l->in_stream, l->out_stream};
	for (int i = 0; i < 2; i++)
		if (streams[i] && Pa_IsStreamStopped(streams[i]) == 0 && Pa_IsStreamActive(streams[i]) == 0)
			return 1;
	return 0;
}

static void stop_stream(PaStream *s, int lost)
{
	if (!s || Pa_IsStreamStopped(s) == 1)
		return;
	/* A lost device may never drain: abort instead of waiting for it. */
	if (lost || Pa_StopStream(s) != paNoError)
		Pa_AbortStream(s);
}

/* Join the worker, but give up after JOIN_MS: a worker stuck in a driver
 * call must not take the control thread (status, watchdog, SIGTERM) with it.
 * An abandoned worker keeps its thread and everything it touches. */
static void join_worker(struct gf_live *l)
{
	struct timespec ts = gf_deadline_in(CLOCK_REALTIME, JOIN_MS * 1000000ull);
	int rc = pthread_timedjoin_np(l->worker, NULL, &ts);
	if (rc == 0)
		return;
	l->worker_abandoned = 1;
	pthread_detach(l->worker);
	gf_err("live: the audio worker did not stop within %d ms (stuck in the engine: %s): "
	       "abandoned, its thread and memory left alive",
	       JOIN_MS, gf_engine_backend_name(l->engine));
}

int gf_live_worker_abandoned(const struct gf_live *l)
{
	return l && l->worker_abandoned;
}

void gf_live_stop(struct gf_live *l)
{
	if (!l || !l->running)
		return;
	l->stopping = 1;
	if (l->pw) {
		gf_live_pw_stop(l);
	} else if (jack_server_gone(l)) {
		l->pa_wedged = 1;
		atomic_store(&pa_wedged, 1);
		gf_warn("live: the JACK server went away; PortAudio cannot release its stream, so "
			"reconnecting needs a restart of gpufir");
	} else {
		int lost = l->device_error != 0 || atomic_load(&l->finished);
		stop_stream(l->in_stream, lost);
		stop_stream(l->out_stream, lost);
	}
	if (l->worker_started) {
		atomic_store_explicit(&l->wstate, GF_W_DRAIN, memory_order_release);
		sem_post(&l->wake);
		join_worker(l);
		l->worker_started = 0;
	}
	gf_recorder_stop(l->rec);
	l->running = 0;
}
