// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/trust-escapes.sh: a process whose
 * names are made to drive a terminal.  Its name (prctl, so the ring file's
 * header has it) and its main thread's (rip_thread_set_name) hold escape
 * sequences that set a terminal's title and clear its screen, a BEL and a
 * C1 control (U+009B, CSI, in UTF-8).  Opens its ring file (RIP_DIR),
 * prints "ready" and snaps until killed.
 */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rip.h>

int main(void)
{
	prctl(PR_SET_NAME, "e\x1b]0;T\x07\x1b[2J");
	if (rip_ring_open(NULL))
		return 1;
	rip_thread_set_name("t\x1b]0;PWNED\x07\x1b[2J\xc2\x9b"
			    "31m");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		rip_snap();
		usleep(1000);
	}
}
