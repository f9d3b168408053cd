/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip/proc.h - the start time of a process, as the ring file records it.
 *
 * A ring file carries the start time of its process (rip_file_hdr's
 * start_ticks) in its header and in its name, rip-PID-STARTTICKS.ring: the
 * writer reads its own, and readers compare a pid's to it to tell the
 * process that made the file from another that got its pid later.  Both
 * sides must read it the same way, so there is one reader, inline, here:
 * field 22 (starttime) of /proc/PID/stat, in clock ticks since boot.
 */
#ifndef RIP_PROC_H
#define RIP_PROC_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* O_CLOEXEC is POSIX.1-2008: absent from a strict C11 compile without feature macros */
#ifdef O_CLOEXEC
#define RIP_PROC_CLOEXEC O_CLOEXEC
#else
#define RIP_PROC_CLOEXEC 0
#endif

/*
 * Field n (3 or more, numbered as proc(5) numbers them: 3 the state, 22 the
 * start time) of the text of a /proc/PID/stat, NULL when it has fewer.
 * The command name in parentheses may hold anything, spaces and ')'
 * included: fields are counted from its last ')'.
 */
static inline const char *rip_proc_stat_field(const char *text, int n)
{
	const char *p = strrchr(text, ')');

	if (!p || p[1] != ' ' || n < 3)
		return NULL;
	for (int field = 2; p && field < n; field++)
		p = strchr(p + 1, ' ');
	return p ? p + 1 : NULL;
}

/*
 * Parse the contents of a /proc/PID/stat file (NUL-terminated): the start
 * time, 0 when the text is not one.  *state gets the process state ('R',
 * 'S', 'Z' for a zombie...), 0 when there is none.
 */
static inline uint64_t rip_proc_stat_start(const char *text, char *state)
{
	const char *s = rip_proc_stat_field(text, 3), *p = rip_proc_stat_field(text, 22);

	*state = s ? *s : 0;
	return p ? strtoull(p, NULL, 10) : 0;
}

/*
 * The start time of process pid (0: the calling process) in clock ticks
 * since boot, 0 when it cannot be read (no such process).  *state as above.
 */
static inline uint64_t rip_proc_start(int pid, char *state)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	*state = 0;
	/* No formatting for this process: a fork child calls this (async-signal-safe calls only). */
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(pid ? path : "/proc/self/stat", O_RDONLY | RIP_PROC_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return rip_proc_stat_start(buf, state);
}

#ifdef __cplusplus
}
#endif

#endif /* RIP_PROC_H */
