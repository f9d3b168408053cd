#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: descriptors made and released through glibc's syscall(2).
# tests/integ/syscall_res.c (fd) opens descriptors with the wrappers and
# with syscall(SYS_openat, SYS_openat2, SYS_pidfd_open, SYS_dup,
# SYS_fcntl F_DUPFD_CLOEXEC, SYS_pipe2, SYS_socket, SYS_eventfd2,
# SYS_memfd_create, and io_uring_setup, userfaultfd, perf_event_open and
# fanotify_init when the kernel lets it), closes some with syscall(SYS_close)
# and with syscall(SYS_close_range) (one range made by dup3 through
# syscall(), one of descriptors the wrappers opened, up to ~0U), marks two
# close-on-exec with CLOSE_RANGE_CLOEXEC (they stay open) and replaces one
# with syscall(SYS_dup3).  rip leaks --json must list exactly the
# descriptors it says it left open, by count, kind and the function that
# opened each, with nothing closed among them; rip report must count no
# close of a descriptor never seen opened, none opened again while open,
# and as many open at the end as /proc says; rip dump must name the kinds
# of syscall(2)'s own calls.
. tests/data/common.sh
prog=$BUILD/tests/integ/syscall_res
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3
echo data >"$TEST_TMP/file"

# Untraced first: does this kernel have the calls?
"$prog" fd "$TEST_TMP/file" >"$TEST_TMP/plain.out" 2>&1
rc=$?
case $rc in
0) ;;
77) skip "$(tail -n 1 "$TEST_TMP/plain.out")" ;;
*) die "the program fails untraced (exit $rc): $(tail -n 3 "$TEST_TMP/plain.out")" ;;
esac

expect_status 0 "rip run --fd" "$RIP" run --fd -q -o "$TEST_TMP/trace" -- "$prog" fd \
	"$TEST_TMP/file"
cp "$TEST_TMP/out" "$TEST_TMP/prog.out"
grep -q '^end ' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
leaks_report_json "$TEST_TMP/trace"
expect_status 0 "rip dump" "$RIP" dump "$TEST_TMP/trace"
cp "$TEST_TMP/out" "$TEST_TMP/dump"

python3 - "$TEST_TMP/prog.out" "$TEST_TMP/leaks.json" "$TEST_TMP/report.json" \
	"$TEST_TMP/dump" <<'PY' || fail "rip leaks, report or dump do not match what the program left"
import collections, json, re, sys
prog = open(sys.argv[1]).read().splitlines()
start = end = None
want = collections.Counter()
for line in prog:
    w = line.split()
    if w[0] == "start":
        start = set(w[1:])
    elif w[0] == "end":
        end = set(w[1:])
    elif w[0] == "want":
        want[(w[1], w[2])] += 1
left = end - start
assert len(left) == sum(want.values()), ("/proc says", sorted(left), "the program", want)

lk = json.load(open(sys.argv[2]))
got = collections.Counter()
for g in lk["leaks"]:
    if g["resource"] != "fd":
        continue
    assert len(g["kinds"]) == 1, ("one kind per group", g["kinds"])
    # gcc may clone a function (sys_dup.constprop.0): its name is the part before the dot
    fn = g["stack"][0]["function"].split(".")[0] if g["stack"] else None
    got[(g["kinds"][0], fn)] += g["count"]
if got != want:
    print("rip leaks:", sorted(got.items()), file=sys.stderr)
    print("wanted:   ", sorted(want.items()), file=sys.stderr)
    print("missing:", sorted((want - got).items()), "extra:", sorted((got - want).items()),
          file=sys.stderr)
    sys.exit(1)

fd = json.load(open(sys.argv[3]))["fd"]
assert fd["closed_unseen"] == 0, ("closes of descriptors never seen opened", fd)
assert fd["reopened"] == 0, ("opened again while open", fd)
assert fd["open_at_end"] == len(left), ("rip report: open at end", fd, len(left))
kinds = {k["kind"]: k for k in fd["kinds"]}
assert "other" not in kinds, ("a kind rip report does not name", fd["kinds"])

# rip dump names every kind the program's leaks have (the new ones included)
dump = open(sys.argv[4]).read()
for kind, fn in want:
    assert re.search(r"fd:open .*kind=%s\b" % re.escape(kind), dump), ("rip dump: kind", kind)
PY
t_done
