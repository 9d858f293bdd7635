/* The test hooks' one reading mechanism (base/test_hook.h): whole numbers and
 * words, each unset, empty or malformed value taken as no hook. */
#include <stdlib.h>

#include "test_hook.h"
#include "testutil.h"

#define VAR "GPUFIR_TEST_HOOK_PROBE"

int main(void)
{
	static const char *const words[] = {"kernel", "tail"};
	unsetenv(VAR);
	CHECK(gf_test_hook_value(VAR, "test") == -1);
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == -1);
	setenv(VAR, "", 1);
	CHECK(gf_test_hook_value(VAR, "test") == -1);
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == -1);
	setenv(VAR, "12", 1);
	CHECK(gf_test_hook_value(VAR, "test") == 12);
	setenv(VAR, "0", 1);
	CHECK(gf_test_hook_value(VAR, "test") == 0);
	setenv(VAR, "12x", 1);
	CHECK(gf_test_hook_value(VAR, "test") == -1);
	setenv(VAR, "-3", 1);
	CHECK(gf_test_hook_value(VAR, "test") == -1);
	setenv(VAR, "tail", 1);
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == 1);
	setenv(VAR, "kernel", 1);
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == 0);
	setenv(VAR, "tails", 1); /* a prefix or a longer word is not a match */
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == -1);
	setenv(VAR, "Tail", 1);
	CHECK(gf_test_hook_choice(VAR, words, 2, "test") == -1);
	unsetenv(VAR);
	return 0;
}
