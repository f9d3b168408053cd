#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: bash (a real shell, each of its children forked and most
# exec'd) runs under rip run --mem --fd --shm --follow-fork --follow-exec
# as it runs plain: pipelines of coreutils, subshells, command
# substitution, a here-document, redirections to files and descriptors,
# a background job waited for, a loop, exit statuses and a death by
# signal; the same output and exit status, no hang, 0 events lost in bash
# and in every followed child and new image, every trace read by rip leaks
# and rip report.  Not followed (--mem alone), the children write no trace.
# Timeout: 150
. tests/data/real.sh
real_need bash seq sort uniq wc tr
cat >"$W/script.sh" <<'SH'
set -e
cd "$1"
seq 1 20000 | sort -r | uniq | wc -l
n=$(seq 1 300 | tr -d 0 | sort -u | wc -l)
echo "distinct without zeros: $n"
( cd / && pwd; ( echo nested; exit 3 ) || echo "inner exit $?" )
{ echo one; echo two >&2; } 2>&1 | tr a-z A-Z
exec 3>"$1/fd3.txt"
echo "to fd 3" >&3
exec 3>&-
cat <<EOF | wc -c
here document line one
here document line two
EOF
seq 1 1000 >"$1/nums.txt" &
wait $!
sum=0
while read -r x; do sum=$((sum + x)); done <"$1/nums.txt"
echo "sum $sum"
for i in 1 2 3; do (echo "loop $i"); done | sort -r
cat "$1/fd3.txt"
SH
mkdir -p "$W/d"
real_run "bash pipelines and subshells" "$REAL_FOLLOW" "rm -f \"\$W/d\"/*" bash "$W/script.sh" "$W/d"
grep -qx 'sum 500500' "$TEST_TMP/plain.out" || fail "bash: unexpected output: $(cat "$TEST_TMP/plain.out")"
[ "$real_traces" -ge 10 ] || fail "bash: $real_traces traces, want bash's and 10 or more children's"

# not followed: one trace only, the same output
real_run "bash, children not followed" "--mem" "rm -f \"\$W/d\"/*" bash "$W/script.sh" "$W/d"
[ "$real_traces" = 1 ] || fail "bash: --mem alone wrote $real_traces traces, want 1"

# exit status and death by signal pass through
real_run "bash exit 7" "$REAL_FOLLOW" : bash -c 'echo out; echo err >&2; (exit 7); exit $?'
[ "$real_prc" = 7 ] || fail "exit 7: untraced status $real_prc"
real_run "bash killed by SIGTERM" "$REAL_FOLLOW" : bash -c 'echo before; kill -TERM $$; echo after'
[ "$real_prc" = 143 ] || fail "SIGTERM: untraced status $real_prc"
t_done
