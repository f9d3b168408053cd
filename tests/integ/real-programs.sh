#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: real programs we did not write run under rip run exactly as
# they run untraced: a bash pipeline, python3 with threads, git init + add +
# commit, sqlite3 on a script from stdin, make driving gcc on a two-file C
# program (then the program it built), a shell that exits 7 and one killed
# by SIGTERM.  Each runs plain, then under rip run --mem --fd --shm
# --follow-fork --follow-exec and under rip run --mem alone: no crash, no
# hang (each run has a timeout), byte-identical stdout and stderr, the same
# exit status, a trace directory whose every trace (children and new
# images included) decodes with nothing lost, holds mem events, and that
# rip leaks reads.
. tests/data/common.sh
need_bin "$RIP"
lib=$BUILD/librip-preload.so
[ -f "$lib" ] || die "$lib is missing: run make"
for p in bash python3 git sqlite3 make cc; do
	command -v "$p" >/dev/null 2>&1 || skip "$p is not installed (mk/deps.sh check)"
done
# the real interpreter, not a wrapper script (pyenv shims are bash scripts)
py=$(python3 -c 'import sys; print(sys.executable)') || die "python3 does not run"
W=$TEST_TMP/w
mkdir -p "$W"
# ring files go to a directory of their own: none may be left behind
RIP_DIR=$TEST_TMP/rings
export RIP_DIR
mkdir -p "$RIP_DIR"
n=0

# check_trace WHAT DIR: DIR and every trace under it (children, new
# images) decode with 0 lost and rip leaks reads them; DIR, the program's
# own, holds mem events (a forked child may only close and exec: not its).
check_trace() {
	[ -f "$2/.rip-index" ] || { fail "$1: no trace in $2"; return 0; }
	for d in "$2" "$2"/*/; do
		[ -d "$d" ] || continue
		"$RIP" leaks "$d" >"$TEST_TMP/leaks" 2>"$TEST_TMP/leaks.err" ||
			fail "$1: rip leaks $d failed: $(head -n 3 "$TEST_TMP/leaks.err")"
		grep -q '^total: ' "$TEST_TMP/leaks" || fail "$1: rip leaks $d printed no total"
		"$RIP" dump "$d" >"$TEST_TMP/dump" 2>"$TEST_TMP/dump.err" ||
			{ fail "$1: rip dump $d failed: $(head -n 3 "$TEST_TMP/dump.err")"; continue; }
		tail -n 1 "$TEST_TMP/dump" | grep -q ' 0 discarded/overwritten, 0 packets lost$' ||
			fail "$1: $d: $(tail -n 1 "$TEST_TMP/dump")"
		[ "$d" = "$2" ] && ! grep -q ' mem:alloc ' "$TEST_TMP/dump" &&
			fail "$1: $d has no mem:alloc event"
	done
	[ -z "$(find "$RIP_DIR" -mindepth 1)" ] ||
		fail "$1: left in the ring directory: $(find "$RIP_DIR" -mindepth 1 | head -n 3)"
}

# same WHAT PREP CMD...: run PREP (a shell command that resets the state),
# then CMD plain, then PREP and CMD traced twice; compare.  Stdin is
# $W/stdin when it exists.
same() {
	s_what=$1 s_prep=$2
	shift 2
	[ -f "$W/stdin" ] || : >"$W/stdin"
	(eval "$s_prep") || die "$s_what: cannot prepare"
	timeout -k 5 40 "$@" <"$W/stdin" >"$TEST_TMP/plain.out" 2>"$TEST_TMP/plain.err"
	prc=$?
	[ "$prc" = 124 ] || [ "$prc" = 137 ] && fail "$s_what: timed out untraced"
	# dash reports a death by signal on the command's stderr; rip run exits 128+N
	[ "$prc" -gt 128 ] && sed -i '/^Terminated$/d' "$TEST_TMP/plain.err"
	for s_opts in "--mem --fd --shm --follow-fork --follow-exec" "--mem"; do
		n=$((n + 1))
		(eval "$s_prep") || die "$s_what: cannot prepare"
		start=$(date +%s)
		# shellcheck disable=SC2086
		timeout -k 5 40 "$RIP" run -q $s_opts -o "$TEST_TMP/t$n" -- "$@" <"$W/stdin" \
			>"$TEST_TMP/traced.out" 2>"$TEST_TMP/traced.err"
		trc=$?
		echo "$s_what ($s_opts): exit $trc, $(($(date +%s) - start))s, trace t$n"
		case $trc in
		124 | 137) fail "$s_what ($s_opts): timed out (hang?)" ;;
		"$prc") ;;
		*) fail "$s_what ($s_opts): exit $trc traced, $prc untraced" ;;
		esac
		cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
			fail "$s_what ($s_opts): stdout differs: $(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" | head -n 6)"
		cmp -s "$TEST_TMP/plain.err" "$TEST_TMP/traced.err" ||
			fail "$s_what ($s_opts): stderr differs: $(diff "$TEST_TMP/plain.err" "$TEST_TMP/traced.err" | head -n 6)"
		check_trace "$s_what ($s_opts)" "$TEST_TMP/t$n"
	done
	rm -f "$W/stdin"
}

# a pipeline: bash forks and execs four programs
same "bash pipeline" : bash -c 'seq 1 20000 | sort -r | uniq | wc -l'
grep -qx 20000 "$TEST_TMP/plain.out" || fail "bash pipeline: wrong output $(cat "$TEST_TMP/plain.out")"
# followed: each of the four children forked (DIR/PID) and exec'd (DIR/PID.1); not: none
k=$(find "$TEST_TMP/t$((n - 1))" -mindepth 1 -maxdepth 1 -type d -name '*.1' | wc -l)
[ "$k" -ge 4 ] || fail "bash pipeline: $k traces of exec'd images, want 4 (seq sort uniq wc)"
k=$(find "$TEST_TMP/t$n" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$k" = 0 ] || fail "bash pipeline: --mem alone wrote $k traces of children"

# python3: threads that allocate, joined, a result printed
same "python3 threads" : "$py" -c '
import threading
res = [None] * 8
def work(k):
    d = {}
    for i in range(30000):
        d[i] = str(i * k) * 2
        if i % 3 == 0:
            del d[i]
    res[k] = sum(len(v) for v in d.values())
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print(res)'
grep -q '^\[' "$TEST_TMP/plain.out" || fail "python3: no result"

# git: the same commit (fixed identity and dates) gives the same hash
GIT_AUTHOR_NAME="Rip Test" GIT_AUTHOR_EMAIL=rip@example.org
GIT_COMMITTER_NAME="Rip Test" GIT_COMMITTER_EMAIL=rip@example.org
GIT_AUTHOR_DATE="2024-01-02T03:04:05+0000" GIT_COMMITTER_DATE="2024-01-02T03:04:05+0000"
GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$W
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL HOME
g=$W/repo
# shellcheck disable=SC2016 # expanded by eval in same()
mkfiles='mkdir -p "$g/src" && seq 1 500 >"$g/numbers.txt" && echo "int x;" >"$g/src/x.c"'
same "git init" "rm -rf \"\$g\"; $mkfiles" git -c init.defaultBranch=main init -q "$g"
same "git add" "rm -rf \"\$g\"; $mkfiles && git init -q -b main \"\$g\"" git -C "$g" add -A
same "git commit" "rm -rf \"\$g\"; $mkfiles && git init -q -b main \"\$g\" && git -C \"\$g\" add -A" \
	git -C "$g" commit -q -m "first commit"
same "git log" "" git -C "$g" log --format=%H
grep -Eqx '[0-9a-f]{40}' "$TEST_TMP/plain.out" || fail "git log: no hash: $(cat "$TEST_TMP/plain.out")"

# sqlite3: a script on stdin: a table, thousands of rows from a recursive CTE, aggregates
cat >"$W/script.sql" <<'SQL'
CREATE TABLE t (id INTEGER PRIMARY KEY, grp INTEGER, val TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)
INSERT INTO t SELECT i, i % 7, printf('row-%06d', i * 31) FROM c;
CREATE INDEX t_grp ON t (grp);
SELECT grp, count(*), sum(length(val)), min(val), max(val) FROM t GROUP BY grp ORDER BY grp;
SELECT count(DISTINCT val), total(id) FROM t;
SQL
cp "$W/script.sql" "$W/stdin"
same "sqlite3" "cp \"\$W/script.sql\" \"\$W/stdin\"" sqlite3 :memory:
grep -q '^6|714|' "$TEST_TMP/plain.out" || fail "sqlite3: unexpected output: $(head -n 3 "$TEST_TMP/plain.out")"

# make drives the compiler: cc, cc1, as, collect2, ld
m=$W/mk
mkdir -p "$m"
cat >"$m/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int twice(int x);
int main(void)
{
	printf("%d\n", twice(21));
	return 0;
}
C
printf 'int twice(int x);\nint twice(int x)\n{\n\treturn 2 * x;\n}\n' >"$m/twice.c"
# shellcheck disable=SC2016 # make's variables
printf 'prog: main.o twice.o\n\t$(CC) -o prog main.o twice.o\n%%.o: %%.c\n\t$(CC) -O1 -c -o $@ $<\n' \
	>"$m/Makefile"
same "make + gcc" "rm -f \"\$m\"/*.o \"\$m/prog\"" make -C "$m" CC=cc
[ -x "$m/prog" ] || fail "make under rip run built no program"
[ "$("$m/prog")" = 42 ] || fail "the program built under rip run prints $("$m/prog")"
same "built program" : "$m/prog"

# exit status and death by signal pass through
same "exit 7" : sh -c 'echo out; echo err >&2; exit 7'
[ "$prc" = 7 ] || fail "exit 7: untraced status $prc"
same "killed by SIGTERM" : sh -c 'echo before; kill -TERM $$; echo after'
[ "$prc" = 143 ] || fail "SIGTERM: untraced status $prc"
t_done
