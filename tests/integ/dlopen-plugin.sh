#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program linked with librip loads a plugin by bare name
# through its $ORIGIN RUNPATH (librip must not change how dlopen finds
# libraries: it wraps nothing), and the plugin's snaps resolve from the ring
# file after SIGKILL: the module map caught up with the dlopen when the
# plugin's constructor registered its event type.
. tests/data/common.sh

CC=${CC:-cc}
mkdir -p "$TEST_TMP/app/plug"
cat >"$TEST_TMP/plug.c" <<'C'
#include <rip.h>
#include <stdio.h>
#include <unistd.h>
RIP_EVENT_TYPE(plug_ev, "plug:loaded", RIP_CAT_USER, RIP_FIELD(U32, "n"));
__attribute__((noinline)) void plug_park(void)
{
	rip_snap(); /* PLUG_LINE */
	printf("parked\n"); /* the snap is in the ring file: kill me */
	fflush(stdout);
	for (;;)
		pause();
}
C
cat >"$TEST_TMP/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <rip.h>
int main(void)
{
	char path[4096];
	void *h;
	void (*park)(void);

	if (rip_ring_open(NULL) || rip_ring_path(path, sizeof(path)))
		return 2;
	h = dlopen("libplug.so", RTLD_NOW);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 3;
	}
	park = (void (*)(void))dlsym(h, "plug_park");
	printf("ready %s\n", path);
	fflush(stdout);
	park();
	return 0;
}
C
inc=$PWD/include lib=$PWD/$BUILD
$CC -O0 -g -fPIC -shared -I"$inc" -o "$TEST_TMP/app/plug/libplug.so" "$TEST_TMP/plug.c" \
	-L"$lib" -lrip || die "cannot build the plugin"
$CC -O0 -g -I"$inc" -o "$TEST_TMP/app/main" "$TEST_TMP/main.c" -Wl,--enable-new-dtags \
	-Wl,-rpath,'$ORIGIN/plug' -Wl,-rpath,"$lib" -L"$lib" -lrip -ldl || die "cannot build main"
line=$(grep -n 'PLUG_LINE' "$TEST_TMP/plug.c" | cut -d: -f1)

t_bg "$TEST_TMP/app/main" >"$TEST_TMP/main.out"
pid=$T_LAST
# killed once the plugin has snapped: "ready RING", then "parked"
wait_until 60 grep -q '^parked$' "$TEST_TMP/main.out" ||
	die "main did not park: $(cat "$TEST_TMP/main.out")"
grep -q '^ready ' "$TEST_TMP/main.out" || die "main: $(cat "$TEST_TMP/main.out")"
ring=$(sed -n 's/^ready //p' "$TEST_TMP/main.out")
t_kill "$pid"

expect_status 0 "rip ps on the dead file" "$RIP" ps --threads "$ring"
grep -q "plug_park *plug.c:$line" "$TEST_TMP/out" ||
	fail "the plugin's snap does not resolve to plug_park at plug.c:$line: $(cat "$TEST_TMP/out")"
t_done
