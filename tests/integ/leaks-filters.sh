#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip leaks --tid, --from/--to and --time-range on leakprog2's
# three phases (A by main, B by threads t1 and t2 and main, C by main, 300
# ms apart): each filter reports exactly the groups made by that thread, or
# in that window and still live at the end (a block made in B and freed in
# C is not one); the window's bounds are taken halfway between the phases
# as the unfiltered report times them, so a slow machine cannot move a
# phase across a bound.  Bad values are usage errors.
. tests/data/common.sh
prog=$BUILD/tests/integ/leakprog2
need_bin "$prog" "$RIP"
need_cmd python3

"$prog" filters >"$TEST_TMP/prog.out" || die "leakprog2 filters failed"
ring=$(head -n 1 "$TEST_TMP/prog.out")
[ -s "$ring" ] || die "leakprog2 made no ring file ($ring)"
tid_main=$(sed -n 's/^main //p' "$TEST_TMP/prog.out")
tid_t1=$(sed -n 's/^t1 //p' "$TEST_TMP/prog.out")
tid_t2=$(sed -n 's/^t2 //p' "$TEST_TMP/prog.out")

# groups FILE: "function:count:bytes ..." of a --json report, in its order
groups() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
print(" ".join("%s:%d:%d" % (g["stack"][0]["function"], g["count"], g["bytes"]) \
for g in r["leaks"]))' "$1"
}

# check WHAT WANT ARGS...: rip leaks --json ARGS RING lists exactly WANT
check() {
	what=$1 want=$2
	shift 2
	"$RIP" leaks --json "$@" "$ring" >"$TEST_TMP/f.json" 2>"$TEST_TMP/f.err" ||
		{ fail "$what: exit $?"; return; }
	got=$(groups "$TEST_TMP/f.json") || { fail "$what: cannot read the JSON report"; return; }
	[ "$got" = "$want" ] || fail "$what: got '$got', want '$want'"
}

all="site_c:1:1000 site_t1:3:300 site_t2:4:200 site_a:2:20 site_bmain:1:7 site_fd:1:0"
check "no filter" "$all"

# threads
check "--tid=t1" "site_t1:3:300" --tid="$tid_t1"
check "--tid=t2" "site_t2:4:200 site_fd:1:0" --tid="$tid_t2"
check "-t main" "site_c:1:1000 site_a:2:20 site_bmain:1:7" -t "$tid_main"
check "--tid=other" "" --tid=999999999
# a thread that made nothing is said to be so (it was silent: "0 blocks", as for a thread that freed all)
grep -q "warning: .*: thread 999999999 made nothing traced" "$TEST_TMP/f.err" ||
	fail "--tid=other: no warning that the thread made nothing: $(cat "$TEST_TMP/f.err")"
"$RIP" leaks --json --tid="$tid_t1" "$ring" >/dev/null 2>"$TEST_TMP/f.err"
grep -q "made nothing traced" "$TEST_TMP/f.err" && fail "--tid=t1 said to have made nothing"
check "--tid --resource=fd" "site_fd:1:0" --tid="$tid_t2" --resource=fd

# the bounds between phases, in microseconds from the first event
"$RIP" leaks --json "$ring" >"$TEST_TMP/all.json" || die "rip leaks --json"
# shellcheck disable=SC2046 # the words it prints
set -- $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
f={g["stack"][0]["function"]: g for g in r["leaks"]}; \
a=f["site_a"]["last"]; b0=min(f[x]["first"] for x in ("site_t1","site_t2","site_bmain","site_fd")); \
b1=max(f[x]["last"] for x in ("site_t1","site_t2","site_bmain","site_fd")); c=f["site_c"]["first"]; \
assert b0 - a > 0.2 and c - b1 > 0.2, (a, b0, b1, c); \
print(int((a + b0) / 2 * 1e6), int((b1 + c) / 2 * 1e6), (a + b0) / 2, (b1 + c) / 2)' \
	"$TEST_TMP/all.json") || die "cannot find the phases"
ab_us=$1 bc_us=$2 ab_s=$3 bc_s=$4
phase_b="site_t1:3:300 site_t2:4:200 site_bmain:1:7 site_fd:1:0"
check "--from --to (B)" "$phase_b" --from="${ab_us}us" --to="${bc_us}us"
check "--time-range (B)" "$phase_b" --time-range="$ab_s,$bc_s"
check "--time-range ms (B)" "$phase_b" \
	--time-range="$((ab_us / 1000))ms,$((bc_us / 1000))ms"
check "--from (B, C)" "site_c:1:1000 $phase_b" --from="$ab_s"
check "--to (A)" "site_a:2:20" --to="${ab_us}us"
check "--from (C)" "site_c:1:1000" --from="${bc_us}us"
check "--from=0 (all)" "$all" --from=0
check "--from past the end" "" --from=100s
check "--tid and --time-range" "site_t1:3:300" --tid="$tid_t1" --time-range="$ab_s,$bc_s"
check "--tid=t1 outside its time" "" --tid="$tid_t1" --to="${ab_us}us"
check "--sort=count (B)" "site_t2:4:200 site_t1:3:300 site_bmain:1:7 site_fd:1:0" \
	--sort=count --from="$ab_s" --to="$bc_s"

# the text report filters the same way, totals included
expect_status 0 "text --tid" "$RIP" leaks --tid="$tid_t1" "$ring"
grep -q '^total: 300 bytes in 3 blocks never freed (1 sites), 0 file descriptors' \
	"$TEST_TMP/out" || fail "text --tid: total line"
grep -q "^      site_t1 (" "$TEST_TMP/out" || fail "text --tid: no site_t1"
grep -q "site_a (\|site_c (\|site_t2 (" "$TEST_TMP/out" && fail "text --tid: other threads' groups"

# usage errors
expect_status 2 "bad tid" "$RIP" leaks --tid=abc "$ring"
expect_status 2 "tid 0" "$RIP" leaks --tid=0 "$ring"
expect_status 2 "bad from" "$RIP" leaks --from=soon "$ring"
expect_status 2 "bad unit" "$RIP" leaks --to=5min "$ring"
expect_status 2 "negative" "$RIP" leaks --from=-1 "$ring"
expect_status 2 "range without comma" "$RIP" leaks --time-range=1 "$ring"
expect_status 2 "empty range" "$RIP" leaks --from=2s --to=1s "$ring"
expect_status 2 "empty range 2" "$RIP" leaks --time-range=1,1 "$ring"
expect_status 0 "--help" "$RIP" leaks --help
for o in --tid --from --to --time-range --diff; do
	grep -q -- "$o" "$TEST_TMP/out" || fail "--help does not list $o"
done

t_done
