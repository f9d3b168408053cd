/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/sandbox.h - sandbox_kill_vm_readv(): install a seccomp filter
 * that kills the process at process_vm_readv, as a sandbox that does not
 * list that call does (systemd's SystemCallFilter= without @debug, most
 * hand-made filters): 0, or -1 where none can be installed.  Used by the
 * tests that our wrappers and watcher never make that call under such a
 * filter (badptr.c, trust_sandbox.c).
 */
#ifndef RIP_TESTS_SANDBOX_H
#define RIP_TESTS_SANDBOX_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static inline int sandbox_kill_vm_readv(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
		return -1;
	return 0;
}

#endif /* RIP_TESTS_SANDBOX_H */
