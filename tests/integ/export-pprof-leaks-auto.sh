#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export --format=pprof --leaks of a source without memory
# events is an error, not a profile of another kind.  --leaks with
# --profile=cpu (or events, threads) is refused, but with the profile left
# to the source, one without memory events (here a trace of rip run with
# no category) got a profile of events counted by stack, exit 0, and
# --leaks was dropped without a word.  It now fails as --through does:
# "--leaks is for heap profiles", exit 1, and no OUT left behind.
. tests/data/common.sh
need_bin "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q -o T -- /bin/true 2>run.err || die "rip run: exit $?: $(cat run.err)"
expect_status 1 "rip export --leaks of a trace without memory events" \
	"$RIP" export -f pprof --leaks -o out.pb.gz T
grep -q -- "--leaks is for heap profiles" "$TEST_TMP/err" ||
	fail "rip export --leaks: no word of why: $(cat "$TEST_TMP/err")"
[ -e out.pb.gz ] && fail "rip export --leaks failed but left out.pb.gz"
# Without --leaks the same trace still exports (a profile of its events).
expect_status 0 "rip export of a trace without memory events" \
	"$RIP" export -f pprof -o all.pb.gz T
[ -s all.pb.gz ] || fail "rip export -f pprof T wrote nothing"
t_done
