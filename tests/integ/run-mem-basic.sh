#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem --fd with the real preload library on a small
# leaky C program built here (-O0 -g -fno-omit-frame-pointer): rip leaks
# finds its leaks at the right functions and lines, its open descriptor,
# and nothing at the site whose blocks were freed; the program's output
# and exit status pass through; the bytes it loses match what valgrind
# calls definitely lost (the program wipes stale copies of its pointers
# before it returns: tests/vgscrub.h).  A statically linked program is refused with a
# clear message.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 valgrind
CC=${CC:-cc}

cat >"$TEST_TMP/leaky.c" <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgscrub.h"

__attribute__((noinline)) static void *make_leak(size_t n)
{
	void *p = malloc(n); /* LEAK-SMALL */
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void leak_big(void)
{
	char *p = calloc(1, 1000); /* LEAK-BIG */
	p[0] = 1;
}

__attribute__((noinline)) static void no_leak(void)
{
	for (int i = 0; i < 10; i++)
		free(malloc(64));
}

int main(void)
{
	for (int i = 0; i < 4; i++)
		make_leak(100);
	leak_big();
	no_leak();
	open("/dev/null", O_RDONLY); /* LEAK-FD */
	write(1, "leaky done\n", 11);
	vg_scrub();
	return 7;
}
EOF
"$CC" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$TEST_TMP/leaky" "$TEST_TMP/leaky.c" ||
	die "cannot build the test program"
line() { grep -n "$1" "$TEST_TMP/leaky.c" | cut -d: -f1; }

"$RIP" run --mem --fd -q -o "$TEST_TMP/trace" -- "$TEST_TMP/leaky" >"$TEST_TMP/prog.out" \
	2>"$TEST_TMP/run.err"
rc=$?
[ "$rc" = 7 ] || { fail "rip run: exit $rc, want the program's 7"; cat "$TEST_TMP/run.err" >&2; }
grep -q '^leaky done$' "$TEST_TMP/prog.out" || fail "the program's output did not pass through"
[ -f "$TEST_TMP/trace/.rip-index" ] || die "no trace written"

expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/out" "$(line LEAK-SMALL)" "$(line LEAK-BIG)" "$(line LEAK-FD)" \
	>"$TEST_TMP/ours" <<'EOF' || fail "rip leaks did not find the leaks where they are"
import json, sys
r = json.load(open(sys.argv[1]))
small, big, fd = (int(x) for x in sys.argv[2:5])
def site(g):
    for f in g["stack"] or []:
        if f["file"] and f["file"].endswith("leaky.c"):
            return f["function"], f["line"]
    return None
found = {}
for g in r["leaks"]:
    s = site(g)
    if s:
        found.setdefault((g["resource"],) + s, [0, 0])
        found[(g["resource"],) + s][0] += g["count"]
        found[(g["resource"],) + s][1] += g["bytes"]
want = {
    ("mem", "make_leak", small): [4, 400],
    ("mem", "leak_big", big): [1, 1000],
    ("fd", "main", fd): [1, 0],
}
for k, v in want.items():
    assert found.get(k) == v, ("want", k, v, "found", found)
assert not [k for k in found if k[1] == "no_leak"], found
assert r["complete"], r
print(sum(v[1] for k, v in found.items() if k[0] == "mem"))
EOF
ours=$(cat "$TEST_TMP/ours")

# text: function (file:line)
expect_status 0 "rip leaks" "$RIP" leaks "$TEST_TMP/trace"
grep -q "make_leak (.*leaky.c:$(line LEAK-SMALL))" "$TEST_TMP/out" || fail "text: make_leak line"

# valgrind agrees on the bytes definitely lost
valgrind --leak-check=full "$TEST_TMP/leaky" >/dev/null 2>"$TEST_TMP/vg.err"
vg=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$TEST_TMP/vg.err" | tr -d ,)
[ -n "$vg" ] || fail "valgrind gave no definitely-lost line"
[ "$vg" = "$ours" ] || fail "definitely lost: valgrind $vg bytes, rip leaks $ours"

# a static program is refused before it runs (libc6-dev, which gcc brings, has libc.a)
echo 'int main(void){return 0;}' >"$TEST_TMP/st.c"
"$CC" -static -o "$TEST_TMP/st" "$TEST_TMP/st.c" 2>"$TEST_TMP/st.err" ||
	die "cannot build a static program: $(head -n 2 "$TEST_TMP/st.err")"
expect_status 1 "static program" "$RIP" run --mem -o "$TEST_TMP/st.trace" -- "$TEST_TMP/st"
grep -q 'statically linked: LD_PRELOAD cannot trace it' "$TEST_TMP/err" ||
	fail "static program: no clear message"
[ -e "$TEST_TMP/st.trace" ] && fail "static program: a trace was written"
t_done
