#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: shared memory a process got but did not make is not its
# leak.  shmexistprog makes a POSIX object and a System V segment untraced;
# under rip run --shm it opens the object without O_CREAT and with O_CREAT
# alone, gets the segment without IPC_CREAT and with IPC_CREAT alone (what a
# PostgreSQL backend does with its postmaster's segments), and makes one
# object of its own with O_CREAT alone, which it leaves.  rip dump names the
# four of the first kind *_existing and the last shm_open; rip leaks lists
# that last one alone (1234 bytes) and rip report counts 1 created, 1 left
# and 4 opened that existed.
. tests/data/common.sh
prog=$BUILD/tests/integ/shmexistprog
need_bin "$prog" "$RIP"
need_cmd python3

name=/rip-shmexist-$$
new=/rip-shmexist-new-$$
key=$((0x52490000 + $$ % 65536))
trap '"$prog" clean "$name" "$key" "$new"; t_cleanup' EXIT
"$prog" clean "$name" "$key" "$new"
"$prog" make "$name" "$key" || die "shmexistprog make failed"

"$RIP" run --shm -q -o "$TEST_TMP/t" -- "$prog" use "$name" "$key" "$new" \
	>"$TEST_TMP/run.out" 2>&1 || fail "rip run: $(cat "$TEST_TMP/run.out")"

expect_status 0 "rip dump" "$RIP" dump "$TEST_TMP/t"
grep -o 'shm:create .*' "$TEST_TMP/out" | sed -E 's/ (id|size|bt)=[^ ]*//g' >"$TEST_TMP/creates"
cat >"$TEST_TMP/want" <<EOW
shm:create kind=shm_open_existing name="$name"
shm:create kind=shm_open_existing name="$name"
shm:create kind=shmget_existing name="$(printf '0x%08x' "$key")"
shm:create kind=shmget_existing name="$(printf '0x%08x' "$key")"
shm:create kind=shm_open name="$new"
EOW
cmp -s "$TEST_TMP/want" "$TEST_TMP/creates" ||
	fail "shm:create events differ:" "$(diff "$TEST_TMP/want" "$TEST_TMP/creates")"

expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/t"
python3 - "$TEST_TMP/out" "$new" <<'EOP' || fail "rip leaks: not just the object made here"
import json, sys
r = json.load(open(sys.argv[1]))
shm = [(g["resource"], g["count"], g["bytes"], g["sample"]) for g in r["leaks"]
       if g["resource"].startswith("shm")]
if shm != [("shm", 1, 1234, sys.argv[2])]:
    print("got:", shm, file=sys.stderr)
    sys.exit(1)
EOP

expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/t"
python3 - "$TEST_TMP/out" <<'EOP' || fail "rip report: wrong segment counts"
import json, sys
s = json.load(open(sys.argv[1]))["shm"]["segments"]
got = (s["created"], s["live"], s["opened"], s["removed"])
if got != (1, 1, 4, 0):
    print("got (created, live, opened, removed):", got, s, file=sys.stderr)
    sys.exit(1)
EOP
expect_status 0 "rip report" "$RIP" report "$TEST_TMP/t"
grep -q '^  segments: 1 created .*, 0 removed, 1 left (1234 bytes), 4 opened that existed' \
	"$TEST_TMP/out" || fail "text report: $(grep segments: "$TEST_TMP/out")"
t_done
