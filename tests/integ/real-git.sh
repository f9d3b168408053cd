#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: git in a temporary repository (HOME and the global config in
# the test's directory, fixed identity and dates) runs under rip run --mem
# --fd --shm --follow-fork --follow-exec as it runs plain: init, add,
# commit, a second commit, gc (which forks and execs pack-objects, reflog,
# repack, prune...) and log; the same output and exit status, no hang, 0
# events lost in git and in every followed child, every trace read by rip
# leaks and rip report.  The same commits give the same hashes traced.
# Timeout: 150
. tests/data/real.sh
real_need git
GIT_AUTHOR_NAME="Rip Test" GIT_AUTHOR_EMAIL=rip@example.org
GIT_COMMITTER_NAME="Rip Test" GIT_COMMITTER_EMAIL=rip@example.org
GIT_AUTHOR_DATE="2024-01-02T03:04:05+0000" GIT_COMMITTER_DATE="2024-01-02T03:04:05+0000"
HOME=$W/home GIT_CONFIG_GLOBAL=$W/home/gitconfig GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE HOME GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM
mkdir -p "$HOME"
printf '[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n[core]\n\tpager = cat\n' >"$GIT_CONFIG_GLOBAL"
g=$W/repo
# shellcheck disable=SC2016 # expanded by eval in real_run
files='mkdir -p "$g/src" && seq 1 3000 >"$g/numbers.txt" && for i in 1 2 3 4 5 6 7 8; do seq $i 9 900 >"$g/src/f$i.txt"; done'
# shellcheck disable=SC2016
commit1='git -C "$g" add -A && git -C "$g" commit -q -m first'
# shellcheck disable=SC2016
commit2='seq 5 5000 >"$g/numbers.txt" && git -C "$g" commit -q -a -m second'

real_run "git init" "$REAL_FOLLOW" "rm -rf \"\$g\"; $files" git init -q "$g"
real_run "git add" "$REAL_FOLLOW" "rm -rf \"\$g\"; $files && git init -q \"\$g\"" git -C "$g" add -A
real_run "git commit" "$REAL_FOLLOW" "rm -rf \"\$g\"; $files && git init -q \"\$g\" && git -C \"\$g\" add -A" \
	git -C "$g" commit -q -m first
real_run "git gc" "$REAL_FOLLOW" "rm -rf \"\$g\"; $files && git init -q \"\$g\" && $commit1 && $commit2" \
	git -C "$g" gc --quiet
# gc ran other git programs: each followed
[ "$real_traces" -ge 3 ] || fail "git gc: $real_traces traces, want gc's and its children's"
real_run "git log" "$REAL_FOLLOW" : git -C "$g" log --format='%H %s' --stat
[ "$(grep -Ec '^[0-9a-f]{40} (first|second)$' "$TEST_TMP/plain.out")" = 2 ] ||
	fail "git log: not two commits: $(head -n 3 "$TEST_TMP/plain.out")"
real_run "git fsck" "$REAL_FOLLOW" : git -C "$g" fsck --no-progress --strict
t_done
