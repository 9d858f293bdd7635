/* The native PipeWire host: gpufir as a node of the desktop's audio graph
 * (docs/live.md, "Native PipeWire"). Two pw_streams in one node group, so one
 * driver clocks both:
 * - "gpufir_capture", an input stream with no target (or input.device's
 *   node): the session manager links it to the default source and relinks it
 *   when the default changes or the device goes and comes back;
 * - "gpufir_denoised", an output stream of media.class Audio/Source: the
 *   virtual microphone that any PipeWire or PulseAudio client records.
 * The capture stream's process callback, on PipeWire's real-time data thread
 * (PW_STREAM_FLAG_RT_PROCESS), takes the captured buffer and a buffer of the
 * source and runs the shared duplex callback (live_audio.c) on both: the same
 * rings, worker, latency and counters as PortAudio's duplex stream. Every
 * other event (state, core errors) comes on the pw_thread_loop's thread; the
 * control thread talks to it only under the loop's lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/latency-utils.h>
#include <spa/utils/result.h>

#include "live_internal.h"
#include "log.h"
#include "pinned.h"

#define CONNECT_MS 2000 /* how long gf_live_pw_open waits for the streams to reach the server */

struct gf_live_pw {
	struct gf_live *l;
	struct pw_thread_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_stream *capture, *source;
	struct spa_hook capture_listener, source_listener;
	uint32_t in_stride, out_stride; /* bytes per interleaved frame */
	/* The callback's output when the source has no buffer (nothing records
	 * it yet) or a smaller one: the audio still runs through the worker. */
	float *scratch;
	size_t scratch_bytes;
	atomic_int lost;  /* set on the loop's thread; why[] is written before it */
	char why[256];	  /* loop thread, then read-only */
	int connected[2]; /* capture, source reached PAUSED or STREAMING (loop thread, locked) */
	/* The graph runs the capture, a source being linked to it (set on the loop's thread). */
	atomic_int capture_streaming;
	/* What the graph is told of the source's latency (publish_latency); under the loop's lock. */
	uint32_t reported;		  /* gpufir's own frames last told (0: nothing yet) */
	struct spa_latency_info upstream; /* the capture latency the capture stream is told */
	/* Missed graph cycles (missed_cycles), data thread only but for resync. */
	atomic_int resync; /* set on a state change: the next callback starts the count afresh */
	uint64_t ticks;	   /* the graph clock's position at the last callback */
	int64_t now_ns;	   /* and the monotonic time it was taken at */
	uint32_t frames;   /* the frames that callback took: the clock's advance by the next */
};

/* Loop thread: the first reason wins; the control thread reads it after the flag. */
static void mark_lost(struct gf_live_pw *pw, const char *fmt, const char *a, const char *b)
{
	if (atomic_load(&pw->lost))
		return;
	snprintf(pw->why, sizeof(pw->why), fmt, a, b);
	atomic_store_explicit(&pw->lost, 1, memory_order_release);
	pw_thread_loop_signal(pw->loop, false);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct gf_live_pw *pw = data;
	(void)seq;
	/* Errors about one object (a link refused) leave the stream running; the
	 * core's own (EPIPE: the server quit or restarted) end the connection. */
	if (id == PW_ID_CORE)
		mark_lost(pw, "the PipeWire server connection ended (%s: %s)", spa_strerror(res),
			  message ? message : "");
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.error = on_core_error,
};

static void state_changed(struct gf_live_pw *pw, int side, enum pw_stream_state state, const char *error)
{
	const char *name = side ? "gpufir_denoised" : "gpufir_capture";
	if (state == PW_STREAM_STATE_ERROR)
		mark_lost(pw, "PipeWire stream %s failed: %s", name, error ? error : "unknown error");
	if (state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING)
		pw->connected[side] = 1;
	if (!side)
		atomic_store_explicit(&pw->capture_streaming, state == PW_STREAM_STATE_STREAMING,
				      memory_order_release);
	atomic_store_explicit(&pw->resync, 1, memory_order_release);
	pw_thread_loop_signal(pw->loop, false);
}

static void on_capture_state(void *data, enum pw_stream_state old, enum pw_stream_state state,
			     const char *error)
{
	(void)old;
	state_changed(data, 0, state, error);
}

/* Under the loop's lock: tell the graph how far gpufir_denoised's ports lag the sound at the
 * microphone, as a capture latency (direction OUTPUT: what a source's output port carries and its
 * consumers' input ports add up): the microphone's own (upstream), plus gpufir's @p frames (the
 * stream's and the suppressor's: total_latency_frames), plus one quantum, since the source's
 * buffer, filled in one graph cycle, is read in the next (docs/live.md, "Latency"). The stream
 * passes the param to its adapter, which puts it on the node's ports (as module-loopback does
 * in this libpipewire, 0.3.65). */
static void publish_latency(struct gf_live_pw *pw, uint32_t frames)
{
	struct spa_latency_info info = pw->upstream;
	info.direction = SPA_DIRECTION_OUTPUT;
	info.min_quantum += 1.0f;
	info.max_quantum += 1.0f;
	info.min_rate += frames;
	info.max_rate += frames;
	uint8_t buf[256];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *param = spa_latency_build(&b, SPA_PARAM_Latency, &info);
	if (param && pw_stream_update_params(pw->source, &param, 1) >= 0)
		pw->reported = frames;
}

/* Loop thread (locked): the graph tells the capture stream the latency of what feeds it; the
 * capture latency (direction OUTPUT) is the microphone's, passed on with gpufir's own added. */
static void on_capture_param(void *data, uint32_t id, const struct spa_pod *param)
{
	struct gf_live_pw *pw = data;
	struct spa_latency_info info;
	if (id != SPA_PARAM_Latency || !param || spa_latency_parse(param, &info) < 0 ||
	    info.direction != SPA_DIRECTION_OUTPUT)
		return;
	pw->upstream = info;
	if (pw->reported)
		publish_latency(pw, pw->reported);
}

static void on_source_state(void *data, enum pw_stream_state old, enum pw_stream_state state,
			    const char *error)
{
	(void)old;
	state_changed(data, 1, state, error);
}

/* Where the callback writes @p n frames: the source's buffer when it has one
 * that holds them, else the scratch buffer (copied below). RT. */
static float *out_frames(struct gf_live_pw *pw, struct pw_buffer *out, uint32_t n)
{
	if (out) {
		struct spa_data *d = &out->buffer->datas[0];
		if (d->data && d->maxsize >= n * pw->out_stride)
			return d->data;
	}
	return pw->scratch;
}

static void finish_out(struct gf_live_pw *pw, struct pw_buffer *out, const float *o, uint32_t n)
{
	struct spa_data *d = &out->buffer->datas[0];
	uint32_t fit = d->data ? d->maxsize / pw->out_stride : 0;
	if (fit > n)
		fit = n;
	if (o == pw->scratch && fit)
		memcpy(d->data, o, (size_t)fit * pw->out_stride);
	d->chunk->offset = 0;
	d->chunk->stride = (int32_t)pw->out_stride;
	d->chunk->size = (o == pw->scratch ? fit : n) * pw->out_stride;
	pw_stream_queue_buffer(pw->source, out);
}

/* Whether the graph ran cycles without this node since its last callback: the clock moved on by
 * more than the @p n frames that callback took, and the monotonic clock agrees (a clock of
 * another driver, after a relink, starts elsewhere; an idle node is not scheduled, and its state
 * changes, which resyncs). libpipewire 0.3.65 tells a stream no xrun of its own: this is what a
 * client sees of one. Counted as the device's xrun (device_xruns). RT. */
static PaStreamCallbackFlags missed_cycles(struct gf_live_pw *pw, uint32_t n)
{
	struct pw_time t;
	if (pw_stream_get_time_n(pw->capture, &t, sizeof(t)) < 0 || !t.rate.denom || !t.rate.num)
		return 0;
	int fresh = atomic_exchange_explicit(&pw->resync, 0, memory_order_acq_rel) || !pw->frames;
	uint64_t rate = pw->l->rate, ticks = t.ticks - pw->ticks;
	uint64_t moved = ticks * t.rate.num * rate / t.rate.denom;	       /* frames at gpufir's rate */
	uint64_t waited = (uint64_t)(t.now - pw->now_ns) * rate / 1000000000u; /* frames of wall time */
	uint64_t slack = pw->frames + pw->frames / 2;
	int missed = !fresh && t.ticks > pw->ticks && moved > slack && waited > slack;
	pw->ticks = t.ticks;
	pw->now_ns = t.now;
	pw->frames = n;
	return missed ? paOutputUnderflow : 0;
}

/* The real-time callback: no allocation, lock, logging or I/O, as PortAudio's. */
static void on_capture_process(void *data)
{
	struct gf_live_pw *pw = data;
	struct pw_buffer *in = pw_stream_dequeue_buffer(pw->capture);
	if (!in)
		return;
	struct spa_data *d = &in->buffer->datas[0];
	uint32_t off = d->chunk->offset < d->maxsize ? d->chunk->offset : d->maxsize;
	uint32_t size = d->chunk->size < d->maxsize - off ? d->chunk->size : d->maxsize - off;
	uint32_t n = size / pw->in_stride;
	if (n > GF_LIVE_MAX_PERIOD)
		n = GF_LIVE_MAX_PERIOD;
	if (d->data && n) {
		struct pw_buffer *out = pw_stream_dequeue_buffer(pw->source);
		float *o = out_frames(pw, out, n);
		gf_live_duplex_cb(SPA_PTROFF(d->data, off, const void), o, n, NULL, missed_cycles(pw, n),
				  pw->l);
		if (out)
			finish_out(pw, out, o, n);
	}
	pw_stream_queue_buffer(pw->capture, in);
}

static const struct pw_stream_events capture_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_capture_state,
	.param_changed = on_capture_param,
	.process = on_capture_process,
};

/* The source has no process callback: its buffers are filled and queued by
 * the capture's, in the same graph cycle. */
static const struct pw_stream_events source_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_source_state,
};

static const struct spa_pod *audio_format(struct spa_pod_builder *b, uint32_t channels, uint32_t rate)
{
	struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .channels = channels, .rate = rate};
	/* Mono, stereo, or as many auxiliary channels (a mixer's outputs). */
	for (uint32_t i = 0; i < channels && i < SPA_AUDIO_MAX_CHANNELS; i++)
		info.position[i] = channels == 1   ? SPA_AUDIO_CHANNEL_MONO
				   : channels == 2 ? (i ? SPA_AUDIO_CHANNEL_FR : SPA_AUDIO_CHANNEL_FL)
						   : SPA_AUDIO_CHANNEL_AUX0 + i;
	return spa_format_audio_raw_build(b, SPA_PARAM_EnumFormat, &info);
}

/* Properties both streams share: one node group (one driver, one clock), one
 * link group (the session manager never links gpufir's source back into its
 * own capture, even when the source is made the default), and the quantum and
 * rate gpufir asks the graph for. */
static struct pw_properties *stream_props(const struct gf_live *l, const char *group)
{
	struct pw_properties *pr = pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_NODE_GROUP, group,
						     PW_KEY_NODE_LINK_GROUP, group, NULL);
	if (pr) {
		pw_properties_setf(pr, PW_KEY_NODE_LATENCY, "%u/%u", l->block, l->rate);
		pw_properties_setf(pr, PW_KEY_NODE_RATE, "1/%u", l->rate);
	}
	return pr;
}

static int make_streams(struct gf_live_pw *pw, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	struct gf_live *l = pw->l;
	char group[64];
	snprintf(group, sizeof(group), "gpufir-%ld", (long)getpid());
	struct pw_properties *cp = stream_props(l, group), *sp = stream_props(l, group);
	if (!cp || !sp) {
		if (cp)
			pw_properties_free(cp);
		if (sp)
			pw_properties_free(sp);
		return GF_E_NOMEM;
	}
	pw_properties_set(cp, PW_KEY_MEDIA_CATEGORY, "Capture");
	pw_properties_set(cp, PW_KEY_NODE_NAME, "gpufir_capture");
	pw_properties_set(cp, PW_KEY_NODE_DESCRIPTION, "gpufir: microphone input");
	if (p->input.device && p->input.device[0])
		pw_properties_set(cp, PW_KEY_TARGET_OBJECT, p->input.device);
	pw_properties_set(sp, PW_KEY_MEDIA_CLASS, "Audio/Source");
	pw_properties_set(sp, PW_KEY_NODE_NAME,
			  p->output.device && p->output.device[0] ? p->output.device : "gpufir_denoised");
	pw_properties_set(sp, PW_KEY_NODE_DESCRIPTION, "gpufir: denoised microphone");
	/* pw_stream_new takes the properties, also on failure. */
	pw->capture = pw_stream_new(pw->core, "gpufir capture", cp);
	pw->source = pw_stream_new(pw->core, "gpufir denoised", sp);
	if (!pw->capture || !pw->source) {
		gf_errbuf_set(eb, "cannot create the PipeWire streams: %s", strerror(errno));
		return GF_E_AUDIO;
	}
	pw_stream_add_listener(pw->capture, &pw->capture_listener, &capture_events, pw);
	pw_stream_add_listener(pw->source, &pw->source_listener, &source_events, pw);
	uint8_t buf[2][1024];
	struct spa_pod_builder bi = SPA_POD_BUILDER_INIT(buf[0], sizeof(buf[0]));
	struct spa_pod_builder bo = SPA_POD_BUILDER_INIT(buf[1], sizeof(buf[1]));
	const struct spa_pod *pin[1] = {audio_format(&bi, l->channels, l->rate)};
	const struct spa_pod *pout[1] = {audio_format(&bo, l->out_channels, l->rate)};
	enum pw_stream_flags f =
		PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS | PW_STREAM_FLAG_INACTIVE;
	int r = pw_stream_connect(pw->capture, PW_DIRECTION_INPUT, PW_ID_ANY, f | PW_STREAM_FLAG_AUTOCONNECT,
				  pin, 1);
	if (r >= 0)
		r = pw_stream_connect(pw->source, PW_DIRECTION_OUTPUT, PW_ID_ANY, f, pout, 1);
	if (r < 0) {
		gf_errbuf_set(eb, "cannot connect the PipeWire streams: %s", spa_strerror(r));
		return GF_E_AUDIO;
	}
	return 0;
}

/* Under the lock: until both streams reached the server, it failed, or CONNECT_MS. */
static int wait_connected(struct gf_live_pw *pw, struct gf_errbuf *eb)
{
	struct timespec until;
	pw_thread_loop_get_time(pw->loop, &until, (int64_t)CONNECT_MS * SPA_NSEC_PER_MSEC);
	while (!(pw->connected[0] && pw->connected[1]) && !atomic_load(&pw->lost))
		if (pw_thread_loop_timed_wait_full(pw->loop, &until) != 0)
			break;
	if (atomic_load(&pw->lost)) {
		gf_errbuf_set(eb, "%s", pw->why);
		return GF_E_AUDIO;
	}
	if (!(pw->connected[0] && pw->connected[1])) {
		gf_errbuf_set(eb, "the PipeWire server did not accept gpufir's streams within %d ms",
			      CONNECT_MS);
		return GF_E_AUDIO;
	}
	return 0;
}

static int connect_server(struct gf_live_pw *pw, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	pw->loop = pw_thread_loop_new("gpufir-pw", NULL);
	pw->context = pw->loop ? pw_context_new(pw_thread_loop_get_loop(pw->loop), NULL, 0) : NULL;
	if (!pw->context || pw_thread_loop_start(pw->loop) < 0) {
		gf_errbuf_set(eb, "cannot start PipeWire's event thread: %s", strerror(errno));
		return GF_E_AUDIO;
	}
	pw_thread_loop_lock(pw->loop);
	int err = 0;
	pw->core = pw_context_connect(pw->context, NULL, 0);
	if (!pw->core) {
		const char *rt = getenv("PIPEWIRE_RUNTIME_DIR");
		gf_errbuf_set(eb,
			      "cannot connect to the PipeWire server: %s (is PipeWire running? socket in %s)",
			      strerror(errno),
			      rt			  ? rt
			      : getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR")
							  : "?");
		err = GF_E_AUDIO;
	} else {
		pw_core_add_listener(pw->core, &pw->core_listener, &core_events, pw);
		err = make_streams(pw, p, eb);
		if (!err)
			err = wait_connected(pw, eb);
	}
	pw_thread_loop_unlock(pw->loop);
	return err;
}

int gf_live_pw_open(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	/* Once per process and never undone: pw_deinit() would pull the
	 * library's state from under a later stream (the daemon reopens). */
	static int inited;
	if (!inited) {
		pw_init(NULL, NULL);
		inited = 1;
	}
	if (p->output.host_api && p->output.host_api[0] && !gf_live_pw_wanted(&p->output)) {
		gf_errbuf_set(eb,
			      "input.host_api = \"PipeWire\" plays to gpufir's own PipeWire source: "
			      "output.host_api = \"%s\" cannot go with it (leave it out)",
			      p->output.host_api);
		return GF_E_CONFIG;
	}
	struct gf_live_pw *pw = calloc(1, sizeof(*pw));
	if (!pw)
		return GF_E_NOMEM;
	l->pw = pw;
	pw->l = l;
	pw->in_stride = l->channels * (uint32_t)sizeof(float);
	pw->out_stride = l->out_channels * (uint32_t)sizeof(float);
	pw->upstream = SPA_LATENCY_INFO(SPA_DIRECTION_OUTPUT);
	pw->scratch_bytes = (size_t)GF_LIVE_MAX_PERIOD * pw->out_stride;
	/* Locked as the stream's buffers are (alloc_buffers): checked against what they left. */
	int err = gf_pinned_check(pw->scratch_bytes, "PipeWire's output buffer", eb);
	if (err)
		return err;
	if (!(pw->scratch = gf_pinned_alloc(pw->scratch_bytes))) {
		gf_errbuf_set(eb, "cannot allocate PipeWire's output buffer (%zu bytes)", pw->scratch_bytes);
		return GF_E_NOMEM;
	}
	snprintf(l->in_desc, sizeof(l->in_desc), "PipeWire %s%s%s",
		 p->input.device && p->input.device[0] ? "node '" : "default source",
		 p->input.device && p->input.device[0] ? p->input.device : "",
		 p->input.device && p->input.device[0] ? "'" : "");
	snprintf(l->out_desc, sizeof(l->out_desc), "PipeWire source '%s'",
		 p->output.device && p->output.device[0] ? p->output.device : "gpufir_denoised");
	return connect_server(pw, p, eb);
}

static void set_active(struct gf_live_pw *pw, bool on)
{
	pw_thread_loop_lock(pw->loop);
	pw_stream_set_active(pw->source, on);
	pw_stream_set_active(pw->capture, on);
	pw_thread_loop_unlock(pw->loop);
}

int gf_live_pw_start(struct gf_live *l, struct gf_errbuf *eb)
{
	struct gf_live_pw *pw = l->pw;
	if (atomic_load_explicit(&pw->lost, memory_order_acquire)) {
		gf_errbuf_set(eb, "%s", pw->why);
		return GF_E_AUDIO;
	}
	set_active(pw, true);
	return 0;
}

void gf_live_pw_stop(struct gf_live *l)
{
	if (l->pw && l->pw->capture && l->pw->source)
		set_active(l->pw, false);
}

void gf_live_pw_close(struct gf_live *l)
{
	struct gf_live_pw *pw = l->pw;
	if (!pw)
		return;
	if (pw->loop) {
		/* Destroying a stream takes it out of the data thread first: no
		 * callback runs after this, so the rings may go. */
		pw_thread_loop_lock(pw->loop);
		if (pw->capture)
			pw_stream_destroy(pw->capture);
		if (pw->source)
			pw_stream_destroy(pw->source);
		if (pw->core)
			pw_core_disconnect(pw->core);
		pw_thread_loop_unlock(pw->loop);
		pw_thread_loop_stop(pw->loop);
	}
	if (pw->context)
		pw_context_destroy(pw->context);
	if (pw->loop)
		pw_thread_loop_destroy(pw->loop);
	gf_pinned_free(pw->scratch, pw->scratch_bytes);
	free(pw);
	l->pw = NULL;
}

void gf_live_pw_latency(struct gf_live *l, uint32_t frames)
{
	struct gf_live_pw *pw = l->pw;
	pw_thread_loop_lock(pw->loop);
	if (frames && frames != pw->reported && !atomic_load(&pw->lost))
		publish_latency(pw, frames);
	pw_thread_loop_unlock(pw->loop);
}

const char *gf_live_pw_lost(struct gf_live *l, char *buf, size_t len)
{
	if (!atomic_load_explicit(&l->pw->lost, memory_order_acquire))
		return NULL;
	snprintf(buf, len, "%s", l->pw->why);
	return buf;
}

int gf_live_pw_idle(const struct gf_live *l)
{
	return !atomic_load_explicit(&l->pw->capture_streaming, memory_order_acquire);
}
