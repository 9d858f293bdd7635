/* Offline files: output formats (by name, by extension, what a format can
 * hold), input and output paths (never write over the input), and a
 * truncated input's warning. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "log.h"
#include "offline_internal.h"
#include "safe_file.h"
#include "sound_trunc.h"

/* ---- formats ------------------------------------------------------------ */

static const struct {
	const char *name;
	int subtype;
} subtypes[] = {
	{"PCM_16", SF_FORMAT_PCM_16},
	{"PCM_24", SF_FORMAT_PCM_24},
	{"PCM_32", SF_FORMAT_PCM_32},
	{"FLOAT", SF_FORMAT_FLOAT},
	{"DOUBLE", SF_FORMAT_DOUBLE},
	{"PCM_S8", SF_FORMAT_PCM_S8},
	{"PCM_U8", SF_FORMAT_PCM_U8},
	{"ULAW", SF_FORMAT_ULAW},
	{"ALAW", SF_FORMAT_ALAW},
	{"IMA_ADPCM", SF_FORMAT_IMA_ADPCM},
	{"MS_ADPCM", SF_FORMAT_MS_ADPCM},
	{"GSM610", SF_FORMAT_GSM610},
	{"VORBIS", SF_FORMAT_VORBIS},
	{"OPUS", SF_FORMAT_OPUS},
	{"ALAC_16", SF_FORMAT_ALAC_16},
	{"ALAC_20", SF_FORMAT_ALAC_20},
	{"ALAC_24", SF_FORMAT_ALAC_24},
	{"ALAC_32", SF_FORMAT_ALAC_32},
	{"MPEG_LAYER_III", SF_FORMAT_MPEG_LAYER_III},
};

int gf_offline_parse_format(const char *name, int *subtype)
{
	for (size_t i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++) {
		if (strcasecmp(name, subtypes[i].name) == 0) {
			*subtype = subtypes[i].subtype;
			return 0;
		}
	}
	return GF_E_INVAL;
}

const char *gf_offline_format_name(int subtype)
{
	for (size_t i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++) {
		if (subtypes[i].subtype == (subtype & SF_FORMAT_SUBMASK))
			return subtypes[i].name;
	}
	return "unknown";
}

const char *gf_offline_format_list(void)
{
	return "PCM_16, PCM_24, PCM_32, FLOAT, DOUBLE, PCM_S8, PCM_U8, ULAW, ALAW, IMA_ADPCM, "
	       "MS_ADPCM, GSM610, VORBIS, OPUS, ALAC_16, ALAC_20, ALAC_24, ALAC_32, MPEG_LAYER_III";
}

/* Float subtypes store values beyond +-1.0; every other one clips them. */
int gf_offline_subtype_clips(int format)
{
	int s = format & SF_FORMAT_SUBMASK;
	return s != SF_FORMAT_FLOAT && s != SF_FORMAT_DOUBLE;
}

/* libsndfile's extension for a major format ("wav", "flac", "oga"), or "". */
static const char *major_extension(int major)
{
	int count = 0;
	sf_command(NULL, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof(count));
	for (int i = 0; i < count; i++) {
		SF_FORMAT_INFO info = {.format = i};
		if (sf_command(NULL, SFC_GET_FORMAT_MAJOR, &info, sizeof(info)) == 0 && info.format == major)
			return info.extension ? info.extension : "";
	}
	return "";
}

const char *gf_offline_major_name(int major)
{
	SF_FORMAT_INFO info = {.format = major};
	if (sf_command(NULL, SFC_GET_FORMAT_INFO, &info, sizeof(info)) == 0 && info.name)
		return info.name;
	return "unknown container";
}

/* Major format named by OUT's extension, 0 if none or unknown. */
static int major_for_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash + 1 : path, '.');
	if (!dot || !dot[1])
		return 0;
	const char *ext = dot + 1;
	if (strcasecmp(ext, "aif") == 0)
		ext = "aiff";
	else if (strcasecmp(ext, "ogg") == 0 || strcasecmp(ext, "opus") == 0)
		ext = "oga";
	int count = 0;
	sf_command(NULL, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof(count));
	for (int i = 0; i < count; i++) {
		SF_FORMAT_INFO info = {.format = i};
		if (sf_command(NULL, SFC_GET_FORMAT_MAJOR, &info, sizeof(info)) == 0 && info.extension &&
		    strcasecmp(info.extension, ext) == 0)
			return info.format;
	}
	return 0;
}

/*
 * OUT's format: IN's container unless OUT's extension names another one; IN's
 * sample format unless --format names one. If a changed container cannot hold
 * IN's sample format, fall back to the best one it can (with a warning).
 */
int gf_offline_choose_format(const SF_INFO *in, const struct gf_offline_opts *o, SF_INFO *out,
			     struct gf_errbuf *eb)
{
	int major = in->format & SF_FORMAT_TYPEMASK;
	int endian = in->format & SF_FORMAT_ENDMASK;
	int ext_major = major_for_path(o->output);
	if (ext_major && strcasecmp(major_extension(ext_major), major_extension(major)) != 0) {
		major = ext_major;
		endian = 0;
	}
	*out = (SF_INFO){.samplerate = in->samplerate, .channels = in->channels};
	int subtype = o->format_subtype ? o->format_subtype : (in->format & SF_FORMAT_SUBMASK);
	out->format = major | subtype | endian;
	if (sf_format_check(out))
		return 0;
	if (o->format_subtype) {
		gf_errbuf_set(eb,
			      "%s: the %s container cannot hold %s samples (%d channels, %d Hz); "
			      "choose another --format",
			      o->output, gf_offline_major_name(major), gf_offline_format_name(subtype),
			      in->channels, in->samplerate);
		return GF_E_INVAL;
	}
	static const int fallback[] = {SF_FORMAT_PCM_24, SF_FORMAT_PCM_16, SF_FORMAT_FLOAT, SF_FORMAT_VORBIS,
				       SF_FORMAT_MPEG_LAYER_III};
	for (size_t i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++) {
		out->format = major | fallback[i];
		if (sf_format_check(out)) {
			gf_warn("%s: the %s container cannot hold %s samples; writing %s (--format chooses)",
				o->output, gf_offline_major_name(major), gf_offline_format_name(subtype),
				gf_offline_format_name(fallback[i]));
			return 0;
		}
	}
	gf_errbuf_set(eb, "%s: cannot write a %s file with %d channels at %d Hz", o->output,
		      gf_offline_major_name(major), in->channels, in->samplerate);
	return GF_E_INVAL;
}

/* ---- paths -------------------------------------------------------------- */

/* Refuse OUT == IN by name, by link or by inode, and OUT being a directory. */
int gf_offline_check_paths(const char *in, const char *out, struct gf_errbuf *eb)
{
	if (strcmp(out, "-") == 0) {
		gf_errbuf_set(eb, "cannot write to standard output (OUT is replaced atomically): "
				  "give a file name");
		return GF_E_INVAL;
	}
	struct stat si, so;
	int in_ok = stat(in, &si) == 0;
	int out_ok = stat(out, &so) == 0;
	char *rin = realpath(in, NULL), *rout = realpath(out, NULL);
	int same = strcmp(in, out) == 0 || (rin && rout && strcmp(rin, rout) == 0) ||
		   (in_ok && out_ok && si.st_dev == so.st_dev && si.st_ino == so.st_ino);
	free(rin);
	free(rout);
	if (same) {
		gf_errbuf_set(eb,
			      "output %s is the input file: choose another output "
			      "(gpufir never overwrites its input)",
			      out);
		return GF_E_INVAL;
	}
	if (out_ok && S_ISDIR(so.st_mode)) {
		gf_errbuf_set(eb, "output %s is a directory: give a file name", out);
		return GF_E_IO;
	}
	/* OUT is replaced by renaming a finished temporary file over it: that
	 * would replace a device node or FIFO (/dev/null, as root) with a file. */
	if (out_ok && !S_ISREG(so.st_mode)) {
		gf_errbuf_set(eb,
			      "output %s is %s: gpufir writes regular files only (OUT is replaced by a "
			      "finished file); give a file name",
			      out, gf_file_mode_kind(so.st_mode));
		return GF_E_IO;
	}
	return 0;
}

void gf_offline_copy_strings(SNDFILE *in, SNDFILE *out)
{
	for (int t = SF_STR_FIRST; t <= SF_STR_LAST; t++) {
		const char *s = sf_get_string(in, t);
		if (s)
			sf_set_string(out, t, s);
	}
}

/*
 * A file cut short (an interrupted copy or download) still opens, and
 * libsndfile reads the frames that are there (sound_trunc.h). Filtering what
 * is there is what the user can use; say so, since the header promised more.
 */
void gf_offline_warn_if_truncated(SNDFILE *f, const SF_INFO *info, const char *path)
{
	uint64_t header;
	if (gf_sound_truncated(f, info, &header))
		gf_warn("%s: the file ends before its header says (truncated?): filtering the %lld frames it "
			"holds",
			path, (long long)info->frames);
}
