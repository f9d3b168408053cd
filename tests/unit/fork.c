/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: fork() without exec.  The child gets a ring file of its own
 * (another path, its pid in the header, RIP_F_FORKED), carrying the history
 * of the forking thread; its snaps never reach the parent's file (the
 * parent's slots keep their seq), and a coroutine handle created before the
 * fork still works in the child and writes into the child's file.  Other
 * threads of the parent show as exited in the child's file.  The parent's
 * ring keeps working after the fork.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"

static sem_t other_go;

__attribute__((noinline)) static void work(void)
{
	rip_snap();
	__asm__ volatile("" ::: "memory");
}

static void *other_main(void *arg)
{
	(void)arg;
	rip_thread_set_name("other");
	work();
	sem_wait(&other_go);
	return NULL;
}

static const struct rr_slot *find(const struct rr_slots *ss, const char *name)
{
	for (size_t i = 0; i < ss->n; i++)
		if (!strcmp(ss->v[i].name, name))
			return &ss->v[i];
	return NULL;
}

/* In the child: snap through the thread and the old coroutine handle. */
static int child(struct rip_coro *co, const char *parent_path, int out_fd)
{
	char path[PATH_MAX];
	size_t len;

	if (rip_ring_path(path, sizeof(path)))
		return 10;
	if (!strcmp(path, parent_path))
		return 11;
	for (int i = 0; i < 7; i++)
		work();
	rip_coro_switch_in(co);
	for (int i = 0; i < 5; i++)
		work();
	rip_coro_switch_out();
	if (rip_coro_set_name(co, "co-child"))
		return 12;
	len = strlen(path) + 1;
	if (write(out_fd, path, len) != (ssize_t)len)
		return 13;
	return 0;
}

int main(void)
{
	const char *tmp = getenv("TEST_TMP");
	char path[PATH_MAX], cpath[PATH_MAX] = "", err[RR_ERR_MAX];
	RIP_OPTS(rip_ring_opts, o, .slots = 32);
	struct rr_slots ps, ps2, cs;
	const struct rr_slot *s, *m;
	struct rr_file pf, cf;
	struct rip_coro *co;
	struct stat st;
	pthread_t other;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	T_SKIP_IF(!tmp, "TEST_TMP is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/fork.ring", tmp);
	unlink(path);
	o.path = path;
	T_EQ(rip_ring_open(&o), 0);
	rip_thread_set_name("main");
	for (int i = 0; i < 3; i++)
		work();
	T_EQ(rip_coro_create("co", &co), 0);
	rip_coro_switch_in(co);
	work();
	rip_coro_switch_out();
	sem_init(&other_go, 0, 0);
	T_EQ(pthread_create(&other, NULL, other_main, NULL), 0);
	if (rr_open(path, &pf, err, sizeof(err))) {
		fprintf(stderr, "rr_open: %s\n", err);
		return T_FAIL;
	}
	for (int i = 0;; i++) { /* until "other" has snapped */
		T_EQ(rr_read_slots(&pf, &ps, err, sizeof(err)), 0);
		s = find(&ps, "other");
		if ((s && s->seq == 1) || i > 5000)
			break;
		rr_slots_free(&ps);
		usleep(1000);
	}
	T_CHECK(pf.map != NULL);
	T_EQ(pipe(fds), 0);

	for (int tries = 0;; tries++) {
		pid = fork();
		if (pid >= 0 || errno != EAGAIN || tries > 50)
			break;
		sleep(1); /* the machine is short of processes: wait, do not insist */
	}
	T_CHECK(pid >= 0);
	if (pid == 0)
		_exit(child(co, path, fds[1]));
	close(fds[1]);
	n = read(fds[0], cpath, sizeof(cpath) - 1);
	T_CHECK(n > 0);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "child status %#x\n", status);
	printf("parent %s, child %s\n", path, cpath);

	/* The parent's file: untouched by the child. */
	T_EQ(rr_read_slots(&pf, &ps2, err, sizeof(err)), 0);
	m = find(&ps2, "main");
	s = find(&ps2, "co");
	T_CHECK(m && m->seq == 3);
	T_CHECK(s && s->seq == 1 && s->state == RIP_SLOT_WAITING);
	T_CHECK(!find(&ps2, "co-child"));
	T_EQ(ps2.n, ps.n);
	T_EQ(((const struct rip_file_hdr *)pf.map)->pid, getpid());
	T_EQ(((const struct rip_file_hdr *)pf.map)->flags & RIP_F_FORKED, 0);

	/* The child's file: its own, with its pid, its snaps, the coroutine's too. */
	if (!cpath[0] || rr_open(cpath, &cf, err, sizeof(err))) {
		fprintf(stderr, "child file: %s\n", cpath[0] ? err : "no path");
		return T_FAIL;
	}
	T_CHECK(strcmp(cpath, path) != 0);
	T_EQ(cf.hdr.pid, pid);
	T_EQ(cf.hdr.ppid, getpid());
	T_CHECK(cf.hdr.flags & RIP_F_FORKED);
	T_EQ(stat(cpath, &st), 0);
	T_EQ(st.st_mode & 0777, 0600);
	T_EQ(rr_read_slots(&cf, &cs, err, sizeof(err)), 0);
	T_EQ(cs.corrupt, 0);
	m = find(&cs, "main");
	T_CHECK(m && m->seq == 3 + 7 && m->tid == pid);
	s = find(&cs, "co-child");
	T_CHECK(s && s->seq == 1 + 5 && s->kind == RIP_KIND_CORO && s->tid == pid);
	s = find(&cs, "other");
	T_CHECK(s && s->state == RIP_SLOT_EXITED); /* no such thread in the child */
	T_EQ(((const struct rip_file_hdr *)cf.map)->live_threads, 1);
	rr_slots_free(&cs);
	rr_close(&cf);

	/* The parent goes on writing into its own file. */
	work();
	rip_coro_switch_in(co);
	work();
	rip_coro_switch_out();
	rr_slots_free(&ps2);
	T_EQ(rr_read_slots(&pf, &ps2, err, sizeof(err)), 0);
	T_CHECK(find(&ps2, "main") && find(&ps2, "main")->seq == 4);
	T_CHECK(find(&ps2, "co") && find(&ps2, "co")->seq == 2);
	sem_post(&other_go);
	pthread_join(other, NULL);
	rr_slots_free(&ps);
	rr_slots_free(&ps2);
	rr_close(&pf);
	return t_result();
}
