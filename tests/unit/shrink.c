/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: every reader of a ring file survives the file shrinking under
 * it (found by tests/fuzz/fuzz-live.c: a process may truncate its own ring
 * file while rip reads it).  A child writes a ring file with a slot and an
 * event ring; the test opens it (rr_open), truncates it to nothing, and then
 * reads the slots, the modules, the event types, the index data of a trace,
 * each event ring, looks for another consumer, copies the live header (as
 * rip ps, ls and enable do), takes the consumer's seat and sets categories: each must fail with -EIO (or find nothing), never die of
 * SIGBUS on the header's live words read or written through the mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/evread.h"
#include "read/ringfile.h"
#include "read/trace.h"
#include "record/consume.h"

static int make_ring(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		RIP_OPTS(rip_ring_opts, o, .path = path, .slots = 16, .ev_rings = 1,
			 .ev_ring_size = 2048, .ev_packet_size = 1024);

		if (rip_ring_open(&o))
			_exit(1);
		rip_snap();
		_exit(0); /* no exit handlers: the file stays as it is */
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	const char *t = getenv("TEST_TMP");
	static const uint64_t bits[RIP_CATEGORY_WORDS] = { 1 };
	char path[PATH_MAX], err[RR_ERR_MAX];
	struct ev_types *types = calloc(1, sizeof(*types));
	struct trace_info info;
	struct rip_module *mods;
	struct ev_packet *pk;
	struct rr_slots slots;
	struct rr_file f;
	size_t n, torn;

	T_SKIP_IF(!t, "TEST_TMP is not set (run through tests/run.sh)");
	T_CHECK(types != NULL);
	snprintf(path, sizeof(path), "%s/shrink.ring", t);
	T_EQ(make_ring(path), 0);

	/* intact: every read works */
	T_EQ(rr_open(path, &f, err, sizeof(err)), 0);
	T_EQ(rr_read_slots(&f, &slots, err, sizeof(err)), 0);
	T_CHECK(slots.n >= 1);
	rr_slots_free(&slots);
	T_EQ(ev_read_types(&f, types, err, sizeof(err)), 0);

	/* the writer (or anyone) cuts the file: the mapping past its end raises SIGBUS */
	T_EQ(truncate(path, 0), 0);
	T_EQ(rr_read_slots(&f, &slots, err, sizeof(err)), -EIO);
	T_EQ(rr_read_modules(&f, &mods, &n, err, sizeof(err)), -EIO);
	T_EQ(ev_read_types(&f, types, err, sizeof(err)), -EIO);
	T_EQ(trace_info_from_file(&f, &info, err, sizeof(err)), -EIO);
	T_CHECK(ev_copy_ring(&f, types, 0, &pk, &n, &torn, err, sizeof(err)) < 0);
	T_EQ(rec_other_consumer(&f), 0);
	{
		struct rip_file_hdr h;
		uint64_t v;

		T_EQ(rr_live_hdr(&f, &h, err, sizeof(err)), -EIO);
		T_EQ(h.slot_count, f.hdr.slot_count); /* the copy made at open */
		T_EQ(rr_live_u64(&f, offsetof(struct rip_file_hdr, ev_lost), &v, err, sizeof(err)),
		     -EIO);
	}
	T_CHECK(ev_consumer_open(&f, err, sizeof(err)) < 0); /* -ESTALE: refused to map */
	T_CHECK(rr_enable_set(&f, bits, true, NULL, err, sizeof(err)) < 0);
	rr_close(&f);

	free(types);
	return t_result();
}
