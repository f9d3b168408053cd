#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: shellcheck finds nothing in the scripts make check runs:
# tests/run.sh, tests/integ/*.sh, the files they source (tests/data/*.sh),
# tests/fuzz/*.sh, mk/*.sh and .ci/run.  The checks the tree turns off are
# in .shellcheckrc, each with its reason; a line that needs an exception
# says why next to its own `# shellcheck disable=`.  A script with an
# unquoted expansion, planted in TEST_TMP, is reported (so the check
# itself can fail).
. tests/data/common.sh

need_cmd shellcheck xargs

scripts="tests/run.sh .ci/run"
for f in tests/integ/*.sh tests/data/*.sh tests/fuzz/*.sh mk/*.sh; do
	[ -f "$f" ] && scripts="$scripts $f"
done

# all of them, a few scripts per shellcheck, several at once
jobs=$(nproc 2>/dev/null || echo 2)
# shellcheck disable=SC2086 # one script a word
printf '%s\n' $scripts | xargs -P "$jobs" -n 12 shellcheck -f gcc >"$TEST_TMP/found" 2>&1
rc=$?
if [ -s "$TEST_TMP/found" ] || [ $rc != 0 ]; then
	fail "shellcheck (exit $rc) found $(wc -l <"$TEST_TMP/found") problems:"
	sed 's/^/    /' "$TEST_TMP/found" >&2
fi

# the planted one, with the tree's settings (.shellcheckrc is found from the script up)
mkdir -p "$TEST_TMP/tree/tests"
cp .shellcheckrc "$TEST_TMP/tree/"
printf '#!/bin/sh\nrm -f $1\n' >"$TEST_TMP/tree/tests/bad.sh"
shellcheck -f gcc "$TEST_TMP/tree/tests/bad.sh" >"$TEST_TMP/bad" 2>&1 &&
	fail "shellcheck found nothing in a script with an unquoted \$1"
grep -q 'SC2086' "$TEST_TMP/bad" || fail "the unquoted \$1 was not reported: $(cat "$TEST_TMP/bad")"

echo "$(echo "$scripts" | wc -w) scripts checked"
t_done
