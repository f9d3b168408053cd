#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report's tables of top sites tell apart sites whose
# first frames are the same.  report_sites.c allocates in grab(), called by
# mid(), called by from_a() (3,000 blocks of 100 bytes) and from_b() (2,000
# of 200): two sites that differ only in their third frame.  The text
# report showed each site's function and its caller, so both read "grab,
# from mid" and the user could not tell which was which; each must now show
# down to the frame that parts them, and no further than the other needs.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/report_sites
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q --mem -o T -- "$prog" 2>run.err || die "rip run: exit $?: $(cat run.err)"
expect_status 0 "rip report T" "$RIP" report T
# The table by number of allocations: from_a's site first, then from_b's.
awk '/^TOP SITES BY NUMBER/ { on = 1; next } on && /^$/ { exit } on' "$TEST_TMP/out" >table
python3 - table <<'PY' || fail "rip report's table of sites: $(cat table)"
import re, sys
sites = []
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\d+)\s+(\d+)\s+(\S+)", line)
    if m:
        sites.append([m.group(3)])
    elif sites and line.strip().startswith("from "):
        sites[-1].append(line.split()[1])
want = {("grab", "mid", "from_a"): 3000, ("grab", "mid", "from_b"): 2000}
got = [tuple(s) for s in sites if s[0] == "grab"]
if sorted(got) != sorted(want):
    print("sites of grab:", got, file=sys.stderr)
    sys.exit(1)
PY
t_done
