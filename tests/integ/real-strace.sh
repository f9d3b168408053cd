#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the descriptors rip records for real programs agree exactly
# with strace's view of the same run (strace -f -y traces rip run and the
# program under it): for every file under the test's directory, each
# open, openat and creat that returned a descriptor and each close of one,
# in order, thread by thread, with the same descriptor numbers and paths
# (tests/data/real-fdcmp.py).  The programs: cp -r of a tree of 40 files,
# cat of 20 files, sort of 10 files into one, tar -c of the tree (openat
# relative to a directory descriptor), sqlite3 writing a database with its
# journal, and python3 writing files from 4 threads.  Each also runs plain
# and under rip run --mem --fd --shm with the usual checks (tests/data/real.sh).
# Timeout: 150
. tests/data/real.sh
real_need strace python3 cp cat sort tar sqlite3
py=$(real_python) || die "python3 does not run"
src=$W/src
for d in a b; do
	mkdir -p "$src/$d"
	for i in $(seq 1 20); do
		seq "$i" 5 $((i * 50)) >"$src/$d/f$i.txt"
	done
done
n=0
# fd_agree WHAT PREP CMD...: PREP, then CMD under strace and rip run --fd; compare.
fd_agree() {
	fa_what=$1 fa_prep=$2
	shift 2
	n=$((n + 1))
	(eval "$fa_prep") || die "$fa_what: cannot prepare"
	mkdir -p "$TEST_TMP/strace$n"
	timeout -k 5 100 strace -ff -y -qq -o "$TEST_TMP/strace$n/log" \
		-e trace=open,openat,openat2,creat,close,dup,dup2,dup3,fcntl \
		"$RIP" run -q --fd --mem -o "$TEST_TMP/s$n" -- "$@" >"$TEST_TMP/s.out" 2>"$TEST_TMP/s.err" ||
		{
			fail "$fa_what: failed under strace and rip run (exit $?): $(tail -n 3 "$TEST_TMP/s.err")"
			return 0
		}
	set -- "$TEST_TMP/strace$n"/log.* --
	for d in "$TEST_TMP/s$n" "$TEST_TMP/s$n"/*/; do
		[ -f "$d/.rip-index" ] || continue
		"$RIP" dump "$d" >"$TEST_TMP/s$n.dump$#" || fail "$fa_what: rip dump $d failed"
		set -- "$@" "$TEST_TMP/s$n.dump$#"
	done
	echo "$fa_what: $(head -n 1 "$TEST_TMP/s.out")"
	python3 tests/data/real-fdcmp.py "$W" "$@" >"$TEST_TMP/cmp" 2>&1 ||
		fail "$fa_what: rip and strace disagree"
	sed 's/^/  /' "$TEST_TMP/cmp"
}

fd_agree "cp -r" "rm -rf \"\$W/dst\"" cp -r "$src" "$W/dst"
real_run "cp -r" "$REAL_OPTS" "rm -rf \"\$W/dst\"" cp -r "$src" "$W/dst"
fd_agree "cat" : cat "$src"/a/f*.txt
fd_agree "sort" "rm -f \"\$W/sorted\"" sort -n -o "$W/sorted" "$src"/b/f1*.txt
fd_agree "tar -c" : tar -cf "$W/src.tar" -C "$W" src
real_run "tar -c" "$REAL_OPTS" "rm -f \"\$W/src.tar\"" tar -cf - -C "$W" --sort=name --mtime=@0 src
printf '%s\n' "CREATE TABLE t (a, b);" "BEGIN;" "INSERT INTO t VALUES (1, 2);" "COMMIT;" \
	"INSERT INTO t SELECT a + 1, b FROM t;" "INSERT INTO t SELECT a + 2, b FROM t;" \
	"SELECT count(*), sum(a) FROM t;" >"$W/db.sql"
fd_agree "sqlite3" "rm -f \"\$W/db.sqlite\"" sqlite3 "$W/db.sqlite" ".read $W/db.sql"
cat >"$W/files.py" <<'PY'
import os, sys, threading
def work(k):
    for i in range(10):
        p = os.path.join(sys.argv[1], "t%d-%d.txt" % (k, i))
        with open(p, "w") as f:
            f.write("x" * (k * 100 + i))
        with open(p) as f:
            assert len(f.read()) == k * 100 + i
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(len(os.listdir(sys.argv[1])))
PY
mkdir -p "$W/py"
fd_agree "python3 threads writing files" "rm -f \"\$W/py\"/*" "$py" "$W/files.py" "$W/py"
t_done
