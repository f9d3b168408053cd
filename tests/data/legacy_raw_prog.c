/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: a stand-in for a program built with the original librip
 * header, for integ/legacy-raw.sh.  It is built there with -no-pie -g (the
 * original stored absolute addresses) and never run: the test only takes
 * the addresses of these functions from nm and writes a raw ring file that
 * points into them.  integ/legacy-pie.sh builds it as a PIE and moves those
 * addresses to a load address of its own.
 */
#include <stdio.h>

#define FN(name)                                                                                   \
	int name(int x);                                                                           \
	__attribute__((noinline, used)) int name(int x)                                            \
	{                                                                                          \
		volatile int v = x;                                                                \
		v = v * 3 + 1;                                                                     \
		v = v ^ (v >> 2);                                                                  \
		return v + (int)sizeof(#name);                                                     \
	}

FN(raw_alpha)
FN(raw_beta)
FN(raw_gamma)
FN(raw_wrap_last)
FN(raw_before_exit)

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", raw_alpha(argc) + raw_beta(argc) + raw_gamma(argc) + raw_wrap_last(argc) +
			       raw_before_exit(argc));
	return 0;
}
