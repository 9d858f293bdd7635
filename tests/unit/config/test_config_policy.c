/*
 * The control API's policy for a client that is not the owner (docs/api.md,
 * "What a client may change"), through gf_config_load_text_guest, as the
 * daemon's SetConfig and ValidateConfig call it for such a client. The file
 * on disk (conf/gpufir.conf) includes conf/inc.conf and reads conf/taps.txt
 * and shared/taps.txt; outside/ holds a 0600 file with a token in it.
 *
 * Accepted: the disk's own text; a filter file in the config's folder or in
 * shared/ (a folder the disk file reads from); max_taps and volume_limit_db
 * lowered. Refused, naming the setting, with nothing of the outside file's
 * content in the message: @include "../outside/secret.conf", the same by its
 * absolute path and through a link in conf/; a filter file outside (by
 * "..", by an absolute path, by a link); output.file; control_socket,
 * control_port, control_address ("0.0.0.0"), control_allowed_origins, status_socket, state_file,
 * control_key_file; max_taps and volume_limit_db raised. The owner's load
 * (gf_config_load_text) of the outside include still works: the policy is
 * the guest's only.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testutil.h"

static char *root, *conf_dir, *conf_path;
static struct gf_config *disk;

#define DISK_TEXT                                                                                            \
	"@include \"inc.conf\"\n"                                                                            \
	"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; },\n"                           \
	"            { name = \"g\"; file = \"../shared/taps.txt\"; format = \"text\"; } );\n"               \
	"chain = [\"f\", \"g\"];\nmax_taps = 100000;\nvolume_limit_db = 0.0;\n"

static char *in(const char *dir, const char *name, const char *text)
{
	char *d = gf_test_path(root, dir);
	mkdir(d, 0755);
	char *p = gf_test_write_text_in(d, name, text);
	free(d);
	return p;
}

static void setup(void)
{
	root = gf_test_tmpdir("config-policy");
	conf_dir = gf_test_path(root, "conf");
	free(in("conf", "inc.conf", "sample_rate = 48000;\n"));
	free(in("conf", "taps.txt", "1.0 0.5\n"));
	free(in("conf", "other.txt", "0.25\n"));
	free(in("shared", "taps.txt", "1.0\n"));
	free(in("shared", "more.txt", "0.5\n"));
	char *secret = in("outside", "secret.conf", "token = \"TOKEN-s3cr3t\";\n");
	CHECK(chmod(secret, 0600) == 0);
	free(in("outside", "taps.txt", "1.0\n"));
	char *link = gf_test_path(conf_dir, "link.conf");
	CHECK(symlink(secret, link) == 0);
	free(link);
	char *outside_taps = gf_test_path(root, "outside/taps.txt");
	link = gf_test_path(conf_dir, "link.txt");
	CHECK(symlink(outside_taps, link) == 0);
	free(link);
	free(outside_taps);
	free(secret);
	conf_path = in("conf", "gpufir.conf", DISK_TEXT);
	struct gf_errbuf eb = {""};
	CHECK_OK_EB(gf_config_load(conf_path, &disk, &eb), &eb);
}

static void accept(const char *what, const char *text)
{
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {""};
	int r = gf_config_load_text_guest(conf_path, text, disk, &c, &eb);
	printf("%s: %s %s\n", what, r ? "REFUSED:" : "accepted", eb.msg);
	CHECK(r == 0 && c);
	gf_config_free(c);
}

static void refuse(const char *what, const char *text, const char *setting)
{
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {""};
	int r = gf_config_load_text_guest(conf_path, text, disk, &c, &eb);
	printf("%s: %s %s\n", what, r ? "refused:" : "ACCEPTED", eb.msg);
	CHECK(r == GF_E_CONFIG && !c);
	CHECK(strstr(eb.msg, setting) != NULL);
	CHECK(strstr(eb.msg, "TOKEN") == NULL && strstr(eb.msg, "s3cr3t") == NULL);
}

/* DISK_TEXT with @p extra after it (top-level settings it does not have). */
static void refuse_extra(const char *what, const char *extra, const char *setting)
{
	char text[2048];
	snprintf(text, sizeof(text), "%s%s", DISK_TEXT, extra);
	refuse(what, text, setting);
}

static void files(void)
{
	char text[2048], abs_inc[1024];
	accept("the disk's own text", DISK_TEXT);
	accept("a filter file in the config's folder",
	       "filters = ( { name = \"f\"; file = \"other.txt\"; format = \"text\"; } );\nchain = "
	       "[\"f\"];\nmax_taps = 100000;\n");
	accept("a filter file in a folder the disk file reads from",
	       "filters = ( { name = \"f\"; file = \"../shared/more.txt\"; format = \"text\"; } );\n"
	       "chain = [\"f\"];\nmax_taps = 100000;\n");
	refuse("@include \"../outside/secret.conf\"", "@include \"../outside/secret.conf\"\n" DISK_TEXT,
	       "@include");
	snprintf(abs_inc, sizeof(abs_inc), "%s/outside/secret.conf", root);
	snprintf(text, sizeof(text), "@include \"%s\"\n%s", abs_inc, DISK_TEXT);
	refuse("an absolute @include outside", text, "@include");
	refuse("an @include through a link in the folder", "@include \"link.conf\"\n" DISK_TEXT, "@include");
	refuse("a filter file by \"..\"",
	       "filters = ( { name = \"f\"; file = \"../outside/taps.txt\"; format = \"text\"; } );\n"
	       "chain = [\"f\"];\nmax_taps = 100000;\n",
	       "filters.f.file");
	snprintf(text, sizeof(text),
		 "filters = ( { name = \"f\"; file = \"%s/outside/taps.txt\"; format = \"text\"; } );\n"
		 "chain = [\"f\"];\nmax_taps = 100000;\n",
		 root);
	refuse("a filter file by an absolute path", text, "filters.f.file");
	refuse("a filter file through a link",
	       "filters = ( { name = \"f\"; file = \"link.txt\"; format = \"text\"; } );\nchain = [\"f\"];\n"
	       "max_taps = 100000;\n",
	       "filters.f.file");
	/* the owner may: the same include through the plain loader */
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {""};
	CHECK_OK_EB(
		gf_config_load_text(conf_path, "@include \"../outside/secret.conf\"\n" DISK_TEXT, &c, &eb),
		&eb);
	gf_config_free(c);
}

static void settings(void)
{
	refuse_extra("output.file", "output = { file = \"rec.wav\"; };\n", "output.file");
	refuse_extra("control_socket", "control_socket = \"/tmp/gpufir-elsewhere\";\n", "control_socket");
	refuse_extra("control_port", "control_port = 1234;\n", "control_port");
	refuse_extra("control_address 0.0.0.0", "control_address = \"0.0.0.0\";\n", "control_address");
	refuse_extra("status_socket", "status_socket = \"/tmp/gpufir-status-elsewhere\";\n", "status_socket");
	refuse_extra("state_file", "state_file = \"state\";\n", "state_file");
	refuse_extra("control_key_file", "control_key_file = \"/tmp/key\";\n", "control_key_file");
	refuse_extra("control_allowed_origins", "control_allowed_origins = [\"http://evil.example\"];\n",
		     "control_allowed_origins");
	refuse("max_taps raised",
	       "@include \"inc.conf\"\nfilters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } "
	       ");\nchain = [\"f\"];\nmax_taps = 6000000;\n",
	       "max_taps");
	refuse("max_taps auto (unbounded by the file's)",
	       "filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\nchain = [\"f\"];\n",
	       "max_taps");
	refuse("volume_limit_db raised",
	       "filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\nchain = [\"f\"];\n"
	       "max_taps = 100000;\nvolume_limit_db = 12.0;\n",
	       "volume_limit_db");
	accept("max_taps and volume_limit_db lowered",
	       "filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\nchain = [\"f\"];\n"
	       "max_taps = 1000;\nvolume_limit_db = -6.0;\n");
}

int main(void)
{
	setup();
	files();
	settings();
	gf_config_free(disk);
	gf_test_rmtree(root);
	free(root);
	free(conf_dir);
	free(conf_path);
	printf("ok\n");
	return 0;
}
