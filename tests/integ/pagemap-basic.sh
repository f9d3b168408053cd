#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip pagemap on a trace of rip run --mem: a 64 MiB malloc block
# (its own mapping, no huge pages) with K pages written nonzero and M with
# zeros shows exactly K+M present pages, M zero, the block's bytes live on
# every page and no unused page; a megabyte freed in the heap shows as
# present pages no live allocation is on; the text table and the JSON agree;
# the tracer's own tables are not in the snapshot.
# Real programs (python3, bash) under rip run --mem give a sane report.
. tests/data/common.sh
prog=$BUILD/tests/integ/pagemapprog
need_bin "$prog" "$RIP"
[ -e "$BUILD/librip-preload.so" ] || die "no $BUILD/librip-preload.so: run make"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"

K=300 M=120
"$RIP" run -q --mem -o "$TEST_TMP/t" -- "$prog" block $K $M >"$TEST_TMP/prog.out" ||
	die "rip run --mem pagemapprog block failed"
expect_status 0 "rip pagemap --json" "$RIP" pagemap --json "$TEST_TMP/t"
cp "$TEST_TMP/out" "$TEST_TMP/pm.json"
python3 - "$TEST_TMP/pm.json" "$TEST_TMP/prog.out" $K $M <<'PY' || fail "block: JSON numbers"
import json, sys
r = json.load(open(sys.argv[1]))
_, addr, size = open(sys.argv[2]).read().split()
addr, size, K, M = int(addr, 16), int(size), int(sys.argv[3]), int(sys.argv[4])
assert r["version"] == 1 and r["complete"] is True, r
s = r["snapshot"]
assert s["seq"] == 1 and s["reason"] == "exit" and s["page_size"] == 4096, s
assert r["snapshots"] == 1 and r["incomplete_snapshots"] == 0, r
maps = r["mappings"]
starts = [int(m["start"], 16) for m in maps]
assert starts == sorted(starts), "not sorted by address"
mine = [m for m in maps if int(m["start"], 16) <= addr < int(m["end"], 16)]
assert len(mine) == 1, mine
b = mine[0]
pages = (int(b["end"], 16) - int(b["start"], 16)) // 4096
assert b["pages"] == pages == size // 4096 + 1, b
assert b["size"] == pages * 4096, b
assert b["present"] == K + M, b              # exact: no huge pages, nothing else touched
assert b["zero"] == M and b["zero_tested"], b
assert b["swapped"] == 0, b
assert b["live_bytes"] == size and b["live_blocks"] == 1, b
assert b["live_pages"] == pages and b["unused"] == 0, b
assert b["name"] == "[anon]" and b["perms"] == "rw-p", b
heap = [m for m in maps if m["path"] == "[heap]"]
assert len(heap) == 1, [m["path"] for m in maps]
h = heap[0]
assert h["unused"] >= 200, h                  # the megabyte freed (4000-byte blocks)
assert h["present"] >= h["unused"] + 1 and h["live_blocks"] >= 1, h
assert h["live_pages"] < 50, h
t = r["total"]
for k in ("size", "pages", "present", "swapped", "zero", "live_pages", "live_bytes",
          "live_blocks", "unused"):
    assert t[k] == sum(m[k] for m in maps), k
assert t["mappings"] == len(maps)
assert s["live_bytes"] >= size and s["live_blocks"] >= 2, s
for m in maps:
    assert m["perms"][1] == "w" and m["perms"][3] == "p", m
    assert m["present"] <= m["pages"] and m["zero"] <= m["present"], m
    assert m["unused"] <= m["present"] and m["live_pages"] <= m["pages"], m
PY

# the text table: the same row for the block
expect_status 0 "rip pagemap" "$RIP" pagemap "$TEST_TMP/t"
start=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a=int(open(sys.argv[2]).read().split()[1],16); print([m["start"][2:] for m in r["mappings"] if int(m["start"],16) <= a < int(m["end"],16)][0])' "$TEST_TMP/pm.json" "$TEST_TMP/prog.out")
row=$(grep "^$start-" "$TEST_TMP/out")
# shellcheck disable=SC2086 # its columns
set -- $row
[ "$2 $3 $4 $5 $6 ${10} ${11}" = "64M 16385 $((K + M)) 0 $M 0 [anon]" ] ||
	fail "text row of the block: '$row'"
grep -q '^total ' "$TEST_TMP/out" || fail "no total line"
grep -q 'snapshot 1 of 1 complete, at exit' "$TEST_TMP/out" || fail "no snapshot line"

# --min-pages hides the small ones, the totals stay
expect_status 0 "rip pagemap --min-pages" "$RIP" pagemap --json --min-pages=100 "$TEST_TMP/t"
python3 - "$TEST_TMP/out" "$TEST_TMP/pm.json" <<'PY' || fail "--min-pages"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert all(m["present"] + m["swapped"] >= 100 for m in a["mappings"]), a["mappings"]
assert 1 <= len(a["mappings"]) < len(b["mappings"])
assert a["total"] == b["total"]
PY

# usage errors
expect_status 2 "no trace" "$RIP" pagemap
expect_status 2 "bad --snapshot" "$RIP" pagemap --snapshot=x "$TEST_TMP/t"
expect_status 0 "--help" "$RIP" pagemap --help
grep -q 'usage: rip pagemap' "$TEST_TMP/out" || fail "--help text"
expect_status 1 "no such trace" "$RIP" pagemap "$TEST_TMP/nothing"

# real programs (the interpreter itself: a pyenv shim would exec it, and an exec'd
# image is not followed)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$RIP" run -q --mem --pagemap-signal=USR2 -o "$TEST_TMP/py" -- "$py" -c '
import os, signal
b = bytearray(32 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
os.kill(os.getpid(), signal.SIGUSR2)
print(len(b))' >/dev/null || die "rip run --mem python3 failed"
expect_status 0 "rip pagemap python3 (signal)" "$RIP" pagemap --json --snapshot=1 "$TEST_TMP/py"
python3 - "$TEST_TMP/out" <<'PY' || fail "python3 --snapshot=1: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
maps = r["mappings"]
assert r["snapshot"]["reason"] == "signal" and r["snapshots"] == 2, r["snapshot"]
assert any(m["path"] == "[heap]" for m in maps) and any(m["path"] == "[stack]" for m in maps)
# the bytearray: 8192 pages written, all live
big = [m for m in maps if m["present"] >= 8192 and m["live_bytes"] >= 32 << 20]
assert len(big) == 1, [(m["name"], m["present"], m["live_bytes"]) for m in maps]
t = r["total"]
assert t["live_blocks"] > 100 and t["unused"] <= t["present"], t
PY
expect_status 0 "rip pagemap python3 (exit)" "$RIP" pagemap --json "$TEST_TMP/py"
python3 - "$TEST_TMP/out" <<'PY' || fail "python3 at exit: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["snapshot"]["reason"] == "exit" and r["snapshot"]["seq"] == 2, r["snapshot"]
t = r["total"]
assert len(r["mappings"]) > 10 and t["present"] > 500 and t["zero"] <= t["present"], t
PY

# The tracer's own tables (over 20 MiB reserved in every traced process: stacks,
# unwind rules, the stack cache) are not the program's memory and are left out:
# /bin/true's private writable mappings come to well under a MiB.
"$RIP" run -q --mem -o "$TEST_TMP/true" -- /bin/true || die "rip run --mem /bin/true failed"
expect_status 0 "rip pagemap /bin/true" "$RIP" pagemap --json "$TEST_TMP/true"
python3 - "$TEST_TMP/out" <<'PY' || fail "/bin/true: the tracer's tables are in the snapshot"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["total"]
assert r["complete"] is True and t["mappings"] >= 3, r
assert t["size"] < 4 << 20, [(m["start"], m["size"], m["name"]) for m in r["mappings"]]
PY

# bash, which exits through exit() (dash calls _exit: no snapshot at exit)
command -v bash >/dev/null || die "bash is needed"
"$RIP" run -q --mem -o "$TEST_TMP/sh" -- bash -c 'x=$(seq 1 2000); echo ${#x}' >/dev/null ||
	die "rip run --mem bash failed"
expect_status 0 "rip pagemap bash" "$RIP" pagemap "$TEST_TMP/sh"
grep -q '\[heap\]' "$TEST_TMP/out" || fail "sh: no [heap] row"
grep -q '^total ' "$TEST_TMP/out" || fail "sh: no total"

t_done
