/* A sound file shorter than its header says: read from libsndfile's log. */
#include "sound_trunc.h"

#include <stdio.h>
#include <string.h>

/* Bytes per sample of the fixed-size encodings; 0 for the others. */
static unsigned sample_bytes(int format)
{
	switch (format & SF_FORMAT_SUBMASK) {
	case SF_FORMAT_PCM_S8:
	case SF_FORMAT_PCM_U8:
	case SF_FORMAT_ULAW:
	case SF_FORMAT_ALAW:
		return 1;
	case SF_FORMAT_PCM_16:
		return 2;
	case SF_FORMAT_PCM_24:
		return 3;
	case SF_FORMAT_PCM_32:
	case SF_FORMAT_FLOAT:
		return 4;
	case SF_FORMAT_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

/*
 * libsndfile logs a chunk longer than the file as "data : N (should be M)"
 * (WAV, N the header's bytes of audio) or "SSND : N (should be M)" (AIFF,
 * whose N counts 8 bytes of offset and block size too).
 */
int gf_sound_truncated(SNDFILE *sf, const SF_INFO *info, uint64_t *header_frames)
{
	char log[4096] = "";
	*header_frames = 0;
	sf_command(sf, SFC_GET_LOG_INFO, log, sizeof(log));
	for (char *save = NULL, *line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " ");
		int ssnd = strncmp(line, "SSND", 4) == 0;
		if (!(ssnd || strncmp(line, "data", 4) == 0) || !strstr(line, "should be"))
			continue;
		unsigned long long bytes = 0;
		uint64_t frame = (uint64_t)sample_bytes(info->format) * (uint64_t)info->channels;
		if (sscanf(line + 4, " : %llu", &bytes) == 1 && frame) {
			uint64_t audio = ssnd && bytes >= 8 ? bytes - 8 : bytes;
			*header_frames = audio / frame;
		}
		return 1;
	}
	return 0;
}
