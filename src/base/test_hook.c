/* The test hooks' values (test_hook.h). */
#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "test_hook.h"

int64_t gf_test_hook_value(const char *name, const char *who)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long n = strtoll(s, &end, 10);
	if (errno || *end || n < 0) {
		gf_warn("%s: ignoring %s=%s (not a whole number)", who, name, s);
		return -1;
	}
	return n;
}
