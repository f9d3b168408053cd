#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program built with -finstrument-functions and linked the
# ordinary way, without librip (its hook calls ask for glibc's no-op hooks
# at GLIBC_2.2.5, which ld.so binds past librip's LIBRIP_0.1), has its
# calls recorded by rip run --functions, with --mem or without, and with
# --preload (librip.so preloaded alone, without librip-preload.so, as
# LD_PRELOAD=librip.so does): rip report --functions gives the exact
# counts, a C++ exception thrown through instrumented frames included,
# every entry with its exit.  Once librip-preload.so defined no hook at
# that version and the report said 0 calls of 0 functions; librip.so
# defined none either (lib/func.c), and with --preload it said the same.
# The program's output and exit status are the same traced.  A build
# without the hooks gets a warning that the trace has no function records.
. tests/data/common.sh
need_bin "$RIP"
CXX=${CXX:-g++}
need_cmd "$CXX" python3
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

cat >p.cc <<'C'
#include <cstdio>
#include <stdexcept>
static int leaf(int i) { return i * 3; }
static int deep(int n) { if (!n) throw std::runtime_error("x"); return deep(n - 1) + 1; }
int main()
{
	int s = 0, caught = 0;
	for (int i = 0; i < 1000; i++)
		s += leaf(i);
	for (int i = 0; i < 10; i++)
		try { deep(4); } catch (const std::exception &) { caught++; }
	printf("%d %d\n", s, caught);
	return 3;
}
C
"$CXX" -O0 -finstrument-functions -o p p.cc 2>cc.err || die "$CXX: $(cat cc.err)"
# the premise: the hook calls ask for glibc's version, not librip's
readelf -W --dyn-syms p | grep -q '__cyg_profile_func_enter@GLIBC_' ||
	skip "$CXX binds the hooks otherwise: $(readelf -W --dyn-syms p | grep cyg_profile)"
./p >plain.out
prc=$?
[ "$prc" = 3 ] || die "the program exits $prc, not 3"

for opts in "--functions" "--mem --functions" "--preload --functions"; do
	rm -rf t
	# shellcheck disable=SC2086 # the options are words
	"$RIP" run $opts -o t -- ./p >run.out 2>run.err
	rc=$?
	[ "$rc" = "$prc" ] || fail "rip run $opts: exit $rc, not $prc: $(cat run.err)"
	cmp -s plain.out run.out || fail "rip run $opts: output differs: $(cat run.out)"
	grep -q ", 0 lost\$" run.err || fail "rip run $opts lost records: $(cat run.err)"
	"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
	python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
	got=$(head -n 5 rep.txt | tr '\n' ' ')
	grep -qx "leaf(int) 1000 0" rep.txt || fail "rip run $opts: leaf not called 1000 times: $got"
	grep -qx "deep(int) 50 0" rep.txt || fail "rip run $opts: deep not called 50 times: $got"
	grep -qx "main 1 0" rep.txt || fail "rip run $opts: main not called once: $got"
	grep -qx "no_exit 0" rep.txt && grep -qx "exits 1051" rep.txt ||
		fail "rip run $opts: entries without exits: $(grep "no_\\|exits" rep.txt)"
	! grep -q "no function records" run.err || fail "rip run $opts: warned: $(cat run.err)"
done

# a program with no instrumented function: rip run --functions says so
"$CXX" -O0 -o q p.cc 2>cc.err || die "$CXX: $(cat cc.err)"
rm -rf t
"$RIP" run --functions -o t -- ./q >run.out 2>run.err
[ $? = 3 ] || fail "rip run --functions of a plain build: $(cat run.err)"
grep -q "warning: --functions: .* no function records" run.err ||
	fail "rip run --functions of a plain build: no warning: $(cat run.err)"
t_done
