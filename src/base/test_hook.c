/* The test hooks' values (test_hook.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int gf_test_hook_choice(const char *name, const char *const *words, int n, const char *who)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char list[160] = "";
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(s, words[i]) == 0)
			return i;
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", words[i]);
		if (w > 0 && (size_t)w < sizeof(list) - used)
			used += (size_t)w;
	}
	gf_warn("%s: ignoring %s=%s (not one of %s)", who, name, s, list);
	return -1;
}
