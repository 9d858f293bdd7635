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
	struct gf_errbuf eb;
	gf_errbuf_set(&eb, "%s:%d: %s", "a.conf", 3, "bad");
	CHECK(strcmp(eb.msg, "a.conf:3: bad") == 0);
	gf_errbuf_set(NULL, "ignored");
	printf("test_error: ok\n");
	return 0;
}
