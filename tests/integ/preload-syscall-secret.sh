#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: memfd_secret, which glibc has no wrapper for, made through
# syscall(2).  tests/integ/syscall_res.c (secret) makes a secret memory
# descriptor with syscall(SYS_memfd_secret), sizes it, maps it shared with
# mmap() and keeps both (a second mapping, made with syscall(SYS_mmap), is
# unmapped); makes another, maps, unmaps and closes it; a memfd_secret the
# kernel refuses changes nothing.  rip leaks --json must list exactly the
# descriptor (kind memfd_secret) and the shared mapping it says it left;
# rip report must count no close of a descriptor never seen opened and no
# detach of a mapping never seen.  Skipped when the kernel has no
# memfd_secret (ENOSYS: before Linux 5.14, or secretmem disabled).
. tests/data/common.sh
prog=$BUILD/tests/integ/syscall_res
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3

"$prog" secret >"$TEST_TMP/plain.out" 2>&1
rc=$?
case $rc in
0) ;;
77) skip "$(tail -n 1 "$TEST_TMP/plain.out")" ;;
*) die "the program fails untraced (exit $rc): $(tail -n 3 "$TEST_TMP/plain.out")" ;;
esac

expect_status 0 "rip run --fd --shm" "$RIP" run --fd --shm -q -o "$TEST_TMP/trace" -- "$prog" \
	secret
cp "$TEST_TMP/out" "$TEST_TMP/prog.out"
grep -q '^done$' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
leaks_report_json "$TEST_TMP/trace"

python3 - "$TEST_TMP/prog.out" "$TEST_TMP/leaks.json" "$TEST_TMP/report.json" <<'PY' ||
import json, sys
sys.path.insert(0, "tests/data")
import wantleaks
wantleaks.check(sys.argv[1], sys.argv[2], lambda g: g["resource"] in ("fd", "shm", "shm-map"), True)

r = json.load(open(sys.argv[3]))
fd, maps = r["fd"], r["shm"]["mappings"]
assert fd["closed_unseen"] == 0, ("closes of descriptors never seen opened", fd)
kinds = {k["kind"]: k for k in fd["kinds"]}
assert "other" not in kinds, ("a kind rip report does not name", fd["kinds"])
assert kinds["memfd_secret"]["opened"] == 2, ("memfd_secret descriptors", fd["kinds"])
assert maps["detached_unseen"] == 0, ("detaches of mappings never seen", maps)
PY
	fail "rip leaks or report do not match what the program left"
t_done
