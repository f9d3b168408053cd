#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the application name rip push gives Pyroscope by default is
# the traced program's command name, which the program chose: a program
# named p{e=x},a="b" must not give its series the label e=x (Pyroscope
# reads NAME{KEY=VALUE,...}) nor end the name early; its name goes as
# p_e_x__a__b_ (blanks, controls and {},=" made _), labels given with -l
# still go in braces after it, and --app is taken as given.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/tests/integ/pprofprog"
need_cmd python3

# a link: the program finds its libraries from where it really is
ln -s "$PWD/$BUILD/tests/integ/pprofprog" "$TEST_TMP/p{e=x},a=\"b\"" || die "cannot link pprofprog"
"$RIP" run -o "$TEST_TMP/heap" -- "$TEST_TMP/p{e=x},a=\"b\"" heap 100 >/dev/null 2>&1 ||
	die "rip run 'p{e=x},a=\"b\"' heap 100"

rm -f "$TEST_TMP/m.port"
t_bg python3 tests/data/pyroscope-mock.py "$TEST_TMP/m.port" "$TEST_TMP/m.rec"
srv=$T_LAST
wait_file "$TEST_TMP/m.port" 20 || die "the mock server did not start"
port=$(cat "$TEST_TMP/m.port")
expect_status 0 "push" "$RIP" push --pyroscope="http://127.0.0.1:$port" "$TEST_TMP/heap"
expect_status 0 "push -l" "$RIP" push --pyroscope="http://127.0.0.1:$port" -l env=test \
	"$TEST_TMP/heap"
expect_status 0 "push --app" "$RIP" push --pyroscope="http://127.0.0.1:$port" --app=shop \
	"$TEST_TMP/heap"
t_kill "$srv"
python3 - "$TEST_TMP/m.rec" <<'PY' || fail "the names sent are not the program's, cleaned"
import json, sys
names = [json.loads(l)["query"].get("name") for l in open(sys.argv[1])]
want = [["p_e_x__a__b_"], ["p_e_x__a__b_{env=test}"], ["shop"]]
if names != want:
    print("names sent:", names, "want:", want, file=sys.stderr)
    sys.exit(1)
PY
t_done
