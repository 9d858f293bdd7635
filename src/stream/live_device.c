/* PortAudio setup for the live stream: initialization, device lookup by
 * index, name or default, and the device list. Control thread only. */
#define _GNU_SOURCE /* strcasestr */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_internal.h"
#include "log.h"

/* Present when PortAudio is built with JACK (Debian's is). Declared weak so a
 * PortAudio without JACK still links; then the call is skipped. */
extern PaError PaJack_SetClientName(const char *name) __attribute__((weak));

int gf_live_pa_init(struct gf_errbuf *eb)
{
	if (PaJack_SetClientName)
		PaJack_SetClientName("gpufir"); /* JACK ports appear as gpufir:in_N / gpufir:out_N */
	/* Pa_Initialize is reference counted; every success is paired with
	 * gf_live_pa_term. After the last Pa_Terminate the next Pa_Initialize
	 * scans the devices again, which is how a lost device is found anew. */
	PaError e = Pa_Initialize();
	if (e != paNoError) {
		gf_errbuf_set(eb, "PortAudio initialization failed: %s", Pa_GetErrorText(e));
		return GF_E_AUDIO;
	}
	return 0;
}

void gf_live_pa_term(void)
{
	Pa_Terminate();
}

static const char *api_name(const PaDeviceInfo *di)
{
	const PaHostApiInfo *ai = Pa_GetHostApiInfo(di->hostApi);
	return ai ? ai->name : "?";
}

void gf_live_describe_device(PaDeviceIndex d, char *buf, size_t len)
{
	const PaDeviceInfo *di = Pa_GetDeviceInfo(d);
	if (!di)
		snprintf(buf, len, "device %d", d);
	else
		snprintf(buf, len, "'%s' (%s)", di->name, api_name(di));
}

static int usable(const PaDeviceInfo *di, int output, const char *host_api)
{
	if (!di || (output ? di->maxOutputChannels : di->maxInputChannels) < 1)
		return 0;
	return !host_api || !host_api[0] || strcasestr(api_name(di), host_api) != NULL;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The default device, of the given host API when one is named. */
static PaDeviceIndex default_device(int output, const char *host_api)
{
	if (!host_api || !host_api[0])
		return output ? Pa_GetDefaultOutputDevice() : Pa_GetDefaultInputDevice();
	for (PaHostApiIndex a = 0; a < Pa_GetHostApiCount(); a++) {
		const PaHostApiInfo *ai = Pa_GetHostApiInfo(a);
		if (ai && strcasestr(ai->name, host_api))
			return output ? ai->defaultOutputDevice : ai->defaultInputDevice;
	}
	return paNoDevice;
}

/* Exact name first, then the first name containing @p name (case-insensitive). */
static PaDeviceIndex match_name(const char *name, int output, const char *host_api, int *n_matches)
{
	PaDeviceIndex exact = paNoDevice, first = paNoDevice;
	*n_matches = 0;
	for (PaDeviceIndex d = 0; d < Pa_GetDeviceCount(); d++) {
		const PaDeviceInfo *di = Pa_GetDeviceInfo(d);
		if (!usable(di, output, host_api))
			continue;
		if (strcmp(di->name, name) == 0 && exact == paNoDevice)
			exact = d;
		if (strcasestr(di->name, name)) {
			if (first == paNoDevice)
				first = d;
			(*n_matches)++;
		}
	}
	if (exact != paNoDevice)
		*n_matches = 1;
	return exact != paNoDevice ? exact : first;
}

int gf_live_find_device(const struct gf_live_endpoint *ep, int output, PaDeviceIndex *out,
			struct gf_errbuf *eb)
{
	const char *side = output ? "output" : "input";
	const char *name = ep->device && ep->device[0] ? ep->device : NULL;
	const char *api = ep->host_api && ep->host_api[0] ? ep->host_api : NULL;
	char where[160] = "";
	if (api)
		snprintf(where, sizeof(where), " with host API matching '%s'", api);
	PaDeviceIndex d = paNoDevice;
	int n = 0;
	if (name && is_number(name)) {
		long idx = strtol(name, NULL, 10);
		d = idx < Pa_GetDeviceCount() ? (PaDeviceIndex)idx : paNoDevice;
		if (d == paNoDevice || !usable(Pa_GetDeviceInfo(d), output, NULL)) {
			gf_errbuf_set(eb,
				      "%s.device = %s: no %s device with that index (%d devices; see "
				      "gpufir --list-devices)",
				      side, name, side, (int)Pa_GetDeviceCount());
			return GF_E_NODEVICE;
		}
	} else if (name) {
		d = match_name(name, output, api, &n);
		if (d == paNoDevice && strcmp(name, "default") == 0)
			d = default_device(output, api);
		if (d == paNoDevice) {
			gf_errbuf_set(eb,
				      "%s.device = \"%s\": no %s device%s has that in its name (see "
				      "gpufir --list-devices)",
				      side, name, side, where);
			return GF_E_NODEVICE;
		}
		if (n > 1)
			gf_notice("%s.device \"%s\" matches %d devices; using %d '%s'", side, name, n, (int)d,
				  Pa_GetDeviceInfo(d)->name);
	} else {
		d = default_device(output, api);
		if (d == paNoDevice) {
			gf_errbuf_set(eb, "no default %s device%s (set %s.device; see gpufir --list-devices)",
				      side, where, side);
			return GF_E_NODEVICE;
		}
	}
	*out = d;
	return 0;
}

uint32_t gf_live_devices(const struct gf_live *l, int playback, struct gf_live_device *out, uint32_t max)
{
	(void)l; /* its reference keeps PortAudio initialized, so the list below is valid */
	PaDeviceIndex def = playback ? Pa_GetDefaultOutputDevice() : Pa_GetDefaultInputDevice();
	uint32_t n = 0;
	for (PaDeviceIndex d = 0; d < Pa_GetDeviceCount(); d++) {
		const PaDeviceInfo *di = Pa_GetDeviceInfo(d);
		int ch = di ? (playback ? di->maxOutputChannels : di->maxInputChannels) : 0;
		if (ch < 1)
			continue;
		if (n < max) {
			struct gf_live_device *o = &out[n];
			snprintf(o->name, sizeof(o->name), "%s", di->name);
			snprintf(o->host_api, sizeof(o->host_api), "%s", api_name(di));
			o->channels = (uint32_t)ch;
			o->rate = di->defaultSampleRate;
			o->is_default = d == def;
		}
		n++;
	}
	return n;
}

int gf_live_list_devices(FILE *out)
{
	struct gf_errbuf eb = {{0}};
	int err = gf_live_pa_init(&eb);
	if (err) {
		gf_err("%s", eb.msg);
		return err;
	}
	PaDeviceIndex din = Pa_GetDefaultInputDevice(), dout = Pa_GetDefaultOutputDevice();
	fprintf(out, "PortAudio %s; host APIs:", Pa_GetVersionText());
	for (PaHostApiIndex a = 0; a < Pa_GetHostApiCount(); a++)
		fprintf(out, "%s %s", a ? "," : "", Pa_GetHostApiInfo(a)->name);
	fprintf(out, "\n%5s  %-28s %-12s %4s %4s %8s\n", "index", "name", "host API", "in", "out", "rate");
	for (PaDeviceIndex d = 0; d < Pa_GetDeviceCount(); d++) {
		const PaDeviceInfo *di = Pa_GetDeviceInfo(d);
		fprintf(out, "%5d  %-28s %-12.12s %4d %4d %8.0f%s%s\n", (int)d, di->name, api_name(di),
			di->maxInputChannels, di->maxOutputChannels, di->defaultSampleRate,
			d == din ? "  default input" : "", d == dout ? "  default output" : "");
	}
	if (Pa_GetDeviceCount() == 0)
		fprintf(out, "(no audio devices)\n");
	fflush(out);
	gf_live_pa_term();
	return 0;
}
