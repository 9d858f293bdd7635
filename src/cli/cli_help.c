/* gpufir --help, --version and the usage synopsis (cli.h). */
#include <sndfile.h>
#include <stdio.h>

#include "cli.h"

void gf_cli_print_usage(FILE *out)
{
	fputs("Usage: gpufir -i IN -o OUT [-c FILE] [OPTION]...\n"
	      "       gpufir -i IN [-i IN]... | --batch LIST [-0]  -o DIR/ [OPTION]...\n"
	      "       gpufir --live [-c FILE] | --list-devices | --check-config [FILE] | --status [SOCKET]\n"
	      "       gpufir --plot [-c FILE] [-o SVG] [--rate HZ | -i IN]\n"
	      "       gpufir --export-filters DIR [-c FILE] [--rate HZ | -i IN]\n",
	      out);
}

void gf_cli_print_help(FILE *out)
{
	gf_cli_print_usage(out);
	fputs("\n"
	      "Filter audio through FIR filters on an NVIDIA GPU (or the CPU), offline or live.\n"
	      "Filters come from a libconfig file (-c); without one, a built-in denoise chain\n"
	      "(mains-hum notches where the input holds hum, hiss low-pass, then a noise\n"
	      "suppressor with a zero-phase rumble high-pass, adding 24 ms) is used.\n"
	      "\n"
	      "Modes (choose one):\n"
	      "  -i, --input=IN         offline: filter the sound file IN (with -o)\n"
	      "  -o, --output=OUT       offline: write the result to OUT; OUT is replaced only\n"
	      "                         when filtering succeeded, and may not be IN\n"
	      "      --live             run the live filter (capture -> filter -> playback or\n"
	      "                         recording) until SIGINT/SIGTERM; SIGHUP reloads\n"
	      "      --list-devices     list audio devices (index, name, host API, channels)\n"
	      "      --check-config [FILE]\n"
	      "                         load and build FILE (or -c FILE, or the built-in default)\n"
	      "                         and print a summary, or the error with file and line\n"
	      "      --status [SOCKET]  ask a running --live instance for its state; SOCKET\n"
	      "                         defaults to the config's status_socket, else\n"
	      "                         /run/gpufir/status (the system service's) or,\n"
	      "                         if only it exists, $XDG_RUNTIME_DIR/gpufir/status\n"
	      "                         (the user service's)\n"
	      "      --json             with --status: the state as JSON, from the control\n"
	      "                         API's socket (SOCKET, else the config's control_socket,\n"
	      "                         else /run/gpufir/control or, if only it exists,\n"
	      "                         $XDG_RUNTIME_DIR/gpufir/control)\n"
	      "      --plot             draw every channel's final FIR (magnitude, group delay,\n"
	      "                         taps) into the SVG file -o (default response.svg)\n"
	      "      --export-filters=DIR\n"
	      "                         write every channel's final FIR to DIR as a 32-bit float\n"
	      "                         WAV and a text file, with a config that loads them\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show version and build features, and exit\n"
	      "\n"
	      "Options:\n"
	      "  -c, --config=FILE      libconfig file with filters, routing, devices\n"
	      "  -b, --backend=KIND     auto, cpu or cuda; overrides the config (offline and\n"
	      "                         --live). auto: offline, the cheaper for the job (the CPU\n"
	      "                         when its run costs less than CUDA's start-up, -v says\n"
	      "                         why); live, CUDA when a GPU is usable; else the CPU\n"
	      "  -a, --algo=ALGO        auto (cheapest), direct or fft; overrides the config\n"
	      "                         (offline and --live)\n"
	      "  -t, --tail             offline: append the filter's ring-out (taps-1 frames);\n"
	      "                         by default OUT has exactly as many frames as IN\n"
	      "      --causal           offline: keep the linear-phase filters' delay; by\n"
	      "                         default it is removed so OUT lines up with IN\n"
	      "  -f, --format=SUBTYPE   offline: sample format of OUT, one of\n"
	      "                         PCM_16, PCM_24, PCM_32, FLOAT, DOUBLE, PCM_U8, PCM_S8,\n"
	      "                         ULAW, ALAW, VORBIS, OPUS, ...; default: IN's format\n"
	      "      --rate=HZ          --check-config, --plot, --export-filters: build the filters\n"
	      "                         at HZ (default: -i IN's rate, else the config's, else 48000)\n"
	      "      --threads=N        CPU backend: threads one long file is filtered on, in\n"
	      "                         stripes (default: the CPUs, a batch's share of them)\n"
	      "\n"
	      "Batches (many files in one process; each keeps the guarantees above):\n"
	      "      --batch=LIST       the inputs, one per line, or INPUT<TAB>OUTPUT; '-' reads\n"
	      "                         the list from standard input; '#' starts a comment\n"
	      "                         (several -i, or -o ending in '/', also make a batch;\n"
	      "                         outputs go to DIR/<input's file name>)\n"
	      "  -0, --null             LIST's names end in NUL bytes, not newlines (find\n"
	      "                         -print0): names may hold newlines; no comments\n"
	      "      --shard=K/N        only jobs K, K+N, K+2N, ... of the list (0 <= K < N):\n"
	      "                         N such runs cover it exactly once (Slurm job arrays)\n"
	      "      --skip-existing    skip a job whose output exists (resume a batch)\n"
	      "  -j, --jobs=N           files in flight at once (default: one per CPU)\n"
	      "      --gpu=LIST         CUDA devices: all, or numbers like 0,1; a batch spreads\n"
	      "                         its files over them; none usable: auto uses the CPU\n"
	      "                         (and says so), --backend cuda fails\n"
	      "\n"
	      "  -q, --quiet            only warnings and errors; no progress bar\n"
	      "  -v, --verbose          debug messages\n"
	      "\n"
	      "Offline mode reads anything libsndfile reads (WAV, FLAC, OGG, AIFF, CAF, W64,\n"
	      "RF64, ...) with any channel count; OUT's container follows its extension (.wav,\n"
	      ".flac, ...), else IN's. Filters are designed at IN's sample rate.\n"
	      "\n"
	      "Exit status:\n"
	      "  0 success, 1 failure, 2 usage error, 6 bad configuration or filter file,\n"
	      "  4 input/output file error, 5 processing error (engine, GPU, audio device),\n"
	      "  130 stopped by SIGINT/SIGTERM; a batch exits with its first failed file's\n"
	      "  status, after a summary line with the counts\n"
	      "\n"
	      "Examples:\n"
	      "  gpufir -i noisy.wav -o clean.wav\n"
	      "  gpufir -i in.flac -o out.flac -c room.conf --tail\n"
	      "  gpufir -i in.wav -o out.wav --format FLOAT --backend cpu\n"
	      "  gpufir -i a.wav -i b.flac -o clean/\n"
	      "  find rec -name '*.wav' | gpufir --batch - -o clean/ --skip-existing\n"
	      "  gpufir --check-config /etc/gpufir/gpufir.conf\n"
	      "  gpufir --plot -c room.conf -o room.svg --rate 44100\n"
	      "  gpufir --export-filters exported -c room.conf\n"
	      "  gpufir --live -c /etc/gpufir/gpufir.conf\n",
	      out);
}

void gf_cli_print_version(FILE *out)
{
	char sndfile_version[128];
	sf_command(NULL, SFC_GET_LIB_VERSION, sndfile_version, sizeof(sndfile_version));
	fprintf(out, "gpufir %s\n", GPUFIR_VERSION);
#ifdef GPUFIR_HAVE_CUDA
	fputs("CUDA backend: built, as a module (libgpufir-cuda.so) loaded when the GPU is used\n", out);
#else
	fputs("CUDA backend: not built in (CPU only)\n", out);
#endif
	fprintf(out, "%s\n", sndfile_version);
}
