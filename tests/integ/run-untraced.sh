#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run says what it did not trace.  (a) A shim that execs
# the real program (sh -c 'exec sleep 0.3', and 'exec true', which ends
# before rip looks twice): without --follow-exec the trace is the shim's
# only, and the summary must say "sh exec'd .../sleep (not followed;
# --follow-exec" (its name at least; true: its name); with --follow-exec, nothing of
# the kind.  (b) A statically linked program without librip under plain rip
# run: rip run must say at once that LD_PRELOAD cannot reach it and that it
# runs untraced, and never ask "is it linked with librip? (else try rip run
# --preload)"; the program still runs, with its exit status.  (c) A script
# without "#!", which execvp runs with /bin/sh: neither static nor secure,
# so it runs traced, under rip run --mem and plain rip run alike, with its
# exit status and no word of being untraced.  (The set-user-ID case is in
# run-messages.sh.)
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"
sleep=$(command -v sleep) || die "no sleep"
sleep=$(readlink -f "$sleep")

# (a) exec not followed
"$RIP" run -o T1 -- sh -c 'exec sleep 0.3' 2>a1.err
rc=$?
[ "$rc" = 0 ] || fail "rip run of the shim: exit $rc: $(cat a1.err)"
# Its path when rip saw it running, else its name (1 run in 10 under
# tests/run.sh here: rip did not see the image while it ran).
grep -Eq "rip run: sh exec'd ($sleep|sleep) \(not followed; --follow-exec" a1.err ||
	fail "no word of the exec of $sleep: $(cat a1.err)"
"$RIP" run -o T2 -- sh -c 'exec true' 2>a2.err || fail "rip run of exec true: $(cat a2.err)"
grep -q "rip run: sh exec'd .*true (not followed; --follow-exec" a2.err ||
	fail "no word of the exec of true: $(cat a2.err)"
"$RIP" run --follow-exec -o T3 -- sh -c 'exec sleep 0.1' 2>a3.err ||
	fail "rip run --follow-exec: $(cat a3.err)"
grep -q "not followed" a3.err && fail "--follow-exec: still says not followed: $(cat a3.err)"
[ -d T3 ] && ls -d T3/[0-9]*.1 >/dev/null 2>&1 || fail "--follow-exec: no trace of the new image"

# (b) a static program without librip
if echo 'int main(void){return 3;}' >st.c && "${CC:-cc}" -static -o st st.c 2>/dev/null; then
	"$RIP" run -o T4 -- ./st 2>b.err
	rc=$?
	[ "$rc" = 3 ] || fail "static program: exit $rc, want its own 3: $(cat b.err)"
	grep -q "st is statically linked: LD_PRELOAD cannot trace it .*; it runs untraced" b.err ||
		fail "static program: no clear message: $(cat b.err)"
	grep -q "linked with librip?" b.err && fail "static program: still asks if it is linked with librip"
	[ "$(wc -l <b.err)" = 1 ] || fail "static program: more than one line: $(cat b.err)"
else
	echo "note: no static libc (cc -static failed): part (b) is not run"
fi

# (c) a script without #!
printf 'echo from the script\nexit 4\n' >plain.sh
chmod +x plain.sh
for opt in --mem --no-waits ""; do
	# shellcheck disable=SC2086 # no option: no word
	"$RIP" run $opt -o "T5$opt" -- ./plain.sh >c.out 2>c.err
	rc=$?
	[ "$rc" = 4 ] || fail "script without #! ($opt): exit $rc, want its own 4: $(cat c.err)"
	grep -q "from the script" c.out || fail "script without #! ($opt): it did not run: $(cat c.err)"
	grep -q "untraced\|cannot" c.err && fail "script without #! ($opt): $(cat c.err)"
done
t_done
