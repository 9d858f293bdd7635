/* Every error code has its own message, and maps to a named exit code. */
#include <string.h>

#include "error.h"
#include "testutil.h"

int main(void)
{
	CHECK(strcmp(gf_strerror(0), "success") == 0);
	for (int code = -1; code > GF_E_LAST; code--) {
		const char *m = gf_strerror(code);
		CHECK(m != NULL);
		CHECK(strcmp(m, "unknown error") != 0);
		for (int other = code - 1; other > GF_E_LAST; other--)
			CHECK(strcmp(m, gf_strerror(other)) != 0);
		int ex = gf_exit_code(code);
		CHECK(ex != GF_EXIT_OK);
	}
	CHECK(strcmp(gf_strerror(GF_E_LAST), "unknown error") == 0);
	CHECK(strcmp(gf_strerror(1), "unknown error") == 0);
	CHECK(gf_exit_code(GF_E_CONFIG) == GF_EXIT_CONFIG);
	CHECK(gf_exit_code(GF_E_IO) == GF_EXIT_IO);
	/* the numbers are an interface: systemd units, scripts and docs name them */
	CHECK(GF_EXIT_OK == 0 && GF_EXIT_FAILURE == 1 && GF_EXIT_USAGE == 2 && GF_EXIT_CONFIG == 6 &&
	      GF_EXIT_IO == 4 && GF_EXIT_PROCESS == 5 && GF_EXIT_INTERRUPTED == 130);
	CHECK(gf_exit_code(GF_E_RATE) == 6 && gf_exit_code(GF_E_NONFINITE) == 6 &&
	      gf_exit_code(GF_E_TOOLONG) == 6);
	CHECK(gf_exit_code(GF_E_FORMAT) == 4 && gf_exit_code(GF_E_NOGPU) == 5 &&
	      gf_exit_code(GF_E_AUDIO) == 5 && gf_exit_code(GF_E_NODEVICE) == 5 &&
	      gf_exit_code(GF_E_INVAL) == 2 && gf_exit_code(GF_E_INTERRUPTED) == 130);
	struct gf_errbuf eb;
	gf_errbuf_set(&eb, "%s:%d: %s", "a.conf", 3, "bad");
	CHECK(strcmp(eb.msg, "a.conf:3: bad") == 0);
	gf_errbuf_set(NULL, "ignored");
	printf("test_error: ok\n");
	return 0;
}
