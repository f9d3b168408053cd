#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: an argument that points nowhere is the kernel's EFAULT to
# give, never a crash in our wrappers.  badptr makes 29 waits whose
# timeout, signal set or mask is a PROT_NONE page, an unmapped one, then a
# PROT_NONE page of its own stack above the call's frames (nanosleep,
# clock_nanosleep, sigsuspend, the sigwait family, ppoll, pselect,
# epoll_pwait, epoll_pwait2, signalfd, pthread_mutex_timedlock, and the
# raw system calls through syscall(2), futex among them), each in a child
# of its own: each must answer as it does untraced (EFAULT; 0 for
# pthread_mutex_timedlock of a free mutex, which never reads its deadline)
# under plain rip run (wait records), under rip run --sample --mem --fd
# (the sampler's signal taken out of sets and masks) and with RIP_RING=1
# and the preload library.  The wrappers read those arguments directly,
# and the program was killed by SIGSEGV in 24 of 58 calls under rip run
# and 46 under rip run --sample --mem --fd; the stack's page, read
# directly as the stack above the call was, killed it in all 29 calls
# under --mem.  The same calls under a seccomp filter that kills the
# process at process_vm_readv (badptr sandboxed: a sandbox that does not
# list it) answer as untraced too: the wrappers tell what cannot be read
# without that call.
. tests/data/common.sh
prog=$BUILD/tests/integ/badptr
need_bin "$prog" "$RIP"

"$prog" >"$TEST_TMP/plain" 2>&1 || die "badptr fails untraced: $(cat "$TEST_TMP/plain")"
[ "$(grep -c ': r=-1 errno=EFAULT$' "$TEST_TMP/plain")" -ge 80 ] ||
	die "badptr: the kernel's EFAULT wanted untraced: $(cat "$TEST_TMP/plain")"
grep -q killed "$TEST_TMP/plain" && die "badptr crashes untraced: $(cat "$TEST_TMP/plain")"

check() {
	same_as_plain "$1" "$(diff "$TEST_TMP/plain" "$TEST_TMP/$1" | grep -c '^>') calls answered otherwise than untraced"
}
"$RIP" run -q -o "$TEST_TMP/t1" -- "$prog" >"$TEST_TMP/run" 2>"$TEST_TMP/err" ||
	fail "rip run: $(cat "$TEST_TMP/err")"
check run
"$RIP" run -q --sample --mem --fd -o "$TEST_TMP/t2" -- "$prog" >"$TEST_TMP/sample" \
	2>"$TEST_TMP/err" || fail "rip run --sample --mem --fd: $(cat "$TEST_TMP/err")"
check sample
preloaded preload "$prog"
check preload

# Sandboxed: process_vm_readv kills the process.
"$prog" sandboxed >"$TEST_TMP/plain" 2>&1
st=$?
if [ $st = 77 ]; then
	skip_part "no seccomp filter can be installed here: the sandboxed calls"
else
	[ $st = 0 ] || die "badptr sandboxed fails untraced: $(cat "$TEST_TMP/plain")"
	"$RIP" run -q --sample --mem --fd -o "$TEST_TMP/t3" -- "$prog" sandboxed \
		>"$TEST_TMP/sandboxed" 2>"$TEST_TMP/err" ||
		fail "rip run --sample --mem --fd, sandboxed: $(cat "$TEST_TMP/err")"
	check sandboxed
fi
t_done
