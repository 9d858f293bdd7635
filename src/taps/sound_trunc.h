/**
 * @file sound_trunc.h
 * A sound file cut short (an interrupted copy or download): libsndfile still
 * opens it and reads the frames that are there, noting the shortfall only in
 * its log. An impulse response missing its tail is a different filter, so
 * filter files refuse it (taps_io.c); the offline input filters what is there
 * with a warning (offline_file.c). Any thread (libsndfile calls on one file).
 */
#ifndef GPUFIR_SOUND_TRUNC_H
#define GPUFIR_SOUND_TRUNC_H

#include <sndfile.h>
#include <stdint.h>

/**
 * Whether the open file @p sf ends before its header says (WAV's data chunk,
 * AIFF's SSND). @p header_frames receives the frames the header promises, or
 * 0 where the encoding has no fixed frame size (ADPCM, GSM, ...).
 * @return 1 if truncated, else 0
 */
int gf_sound_truncated(SNDFILE *sf, const SF_INFO *info, uint64_t *header_frames);

#endif
