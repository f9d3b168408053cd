#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps of a live program run by rip run (no resource
# tracing) names a caller in a library the program dlopen'd after it
# started, as a JVM's launcher loads libjvm.so and a Python interpreter its
# extension modules.  Such a program made no call that updates librip's
# module map (a thread's exit, a coroutine, rip_thread_set_name): its map
# had not the library until the program exited, so a thread waiting in a
# call from it showed a bare address ("0x7f...  ?") live, and its name only
# after the exit.  rip ps of a live process now reads what it maps in
# /proc/PID/maps too (the ring file's modules win where they overlap), with
# one thread (no watcher) or more.  (The watcher does not rescan the map:
# its dl_iterate_phdr would hold glibc's dl_load_write_lock, which a fork
# meanwhile leaves held in the child.)
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"

CC=${CC:-cc}
cat >"$TEST_TMP/lib.c" <<'C'
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
__attribute__((noinline)) void *dlwait_in_plugin(void *arg)
{
	for (;;)
		poll(NULL, 0, -1);
	return arg;
}
void dlwait_here(void)
{
	dlwait_in_plugin(NULL);
}
int dlwait_start(void)
{
	pthread_t t;

	return pthread_create(&t, NULL, dlwait_in_plugin, NULL);
}
C
cat >"$TEST_TMP/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*start)(void);
	void (*here)(void);
	FILE *f;

	if (!h || !(start = (int (*)(void))dlsym(h, "dlwait_start")) ||
	    !(here = (void (*)(void))dlsym(h, "dlwait_here")))
		return 1;
	if (argc < 4 && start()) /* a thread waits in the library; else main, alone */
		return 1;
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	if (argc > 3)
		here();
	for (;;)
		pause();
}
C
"$CC" -g -shared -fPIC -o "$TEST_TMP/libdlwait.so" "$TEST_TMP/lib.c" -pthread ||
	die "cannot build the library"
"$CC" -g -o "$TEST_TMP/main" "$TEST_TMP/main.c" -ldl || die "cannot build main"

# check NAME [ALONE]: the program (one thread, with ALONE) waits in the library; rip ps names it
check() {
	rm -f "$TEST_TMP/ready"
	t_bg "$RIP" run -q -o "$TEST_TMP/trace-$1" -- "$TEST_TMP/main" "$TEST_TMP/libdlwait.so" \
		"$TEST_TMP/ready" ${2:+"$2"}
	wait_file "$TEST_TMP/ready" 30 || die "$1: the program did not start"
	pid=$(cat "$TEST_TMP/ready")
	T_PIDS="$T_PIDS $pid"
	# it waits once it has written its pid: until then rip ps may see it before the call
	wait_until 30 sh -c "'$RIP' ps $pid | grep -q 'poll('" || die "$1: no thread waits in poll"
	expect_status 0 "$1: rip ps PID" "$RIP" ps "$pid"
	grep -q 'poll.*dlwait_in_plugin  *lib\.c:' "$TEST_TMP/out" ||
		fail "$1: rip ps does not name the caller in the dlopen'd library: $(cat "$TEST_TMP/out")"
	kill -9 "$pid"
}
check threads
check alone 1
t_done
