#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a thread that snaps in a tight loop (a snap every few ns)
# is shown where it snaps.  rip ps read its 32-entry snap ring once, and
# when the thread had overwritten every entry meanwhile it kept none:
# "(no snap yet)" in about one look of 5 to 25.  Now the ring is read
# again until it is intact, the best read kept: 60 looks must all put the
# spinner in spin, with --threads too.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >spin.c <<'C'
#include <pthread.h>
#include <rip.h>

#include "helpers.h"
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) static void spin(void)
{
	for (;;)
		rip_snap();
}

static void *th(void *a)
{
	rip_thread_set_name("spinner");
	spin();
	return a;
}

int main(int argc, char **argv)
{
	pthread_t t;

	pthread_create(&t, 0, th, 0);
	usleep(200000);
	t_ready(argv[1]);
	for (;;)
		pause();
}
C
t_cc_rip spin
t_bg env RIP_RING=1 ./spin "$TEST_TMP/ready"
t_ready_pid "$TEST_TMP/ready"
bad=0
i=0
while [ $i -lt 60 ]; do
	i=$((i + 1))
	"$RIP" ps "$pid" >g.txt 2>&1 || fail "rip ps: $(cat g.txt)"
	grep -q ' spin .* thread spinner$' g.txt || {
		bad=$((bad + 1))
		cp g.txt bad-g.txt
	}
	"$RIP" ps --threads "$pid" >t.txt 2>&1 || fail "rip ps --threads: $(cat t.txt)"
	sed -n '/^thread spinner/,/^$/p' t.txt | grep -q ' spin  *spin\.c:[0-9]* ' || {
		bad=$((bad + 1))
		cp t.txt bad-t.txt
	}
done
[ "$bad" = 0 ] || fail "$bad of 120 looks did not put the spinner in spin: $(cat bad-*.txt | head -n 12)"
t_done
