/* Placeholder front end; replaced by the CLI module. */
#include <stdio.h>

int main(void)
{
	puts("gpufir " GPUFIR_VERSION);
	return 0;
}
