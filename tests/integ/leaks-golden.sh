#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the text of rip leaks, line for line, against a golden file.
# The program of leaks-accept.sh (tests/integ/leaks_accept.cc) runs under
# rip run --mem --fd --shm; `rip leaks` and `rip leaks --sort=count
# --addresses --resource=mem` on its trace are normalised and compared with
# tests/data/leaks-golden.txt.  The normalisation keeps what rip decides and
# drops what legitimately varies from run to run and machine to machine:
# addresses become 0xADDR, times T, the pid PID, event counts N, the
# temporary directory TMP and the shm name /rip-accept-PID; a line number in
# the program becomes the tag written on that line ([SITE:malloc]), so that
# editing the program elsewhere does not move the golden lines; frames
# outside the program (libc, libstdc++: their names and lines change with
# their versions) are dropped, and so are whole groups with no frame in the
# program (start-up allocations of libstdc++, if traced), along with the
# total line then.  The ASan build prints the same bytes.
#
# To regenerate the golden file after a deliberate change of the output:
#	RIP_GOLDEN_UPDATE=1 sh tests/run.sh leaks-golden
# then review `git diff tests/data/leaks-golden.txt` before committing.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN" "$BUILD/librip-preload.so"
need_cmd python3
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null || die "no C++ compiler ($CXX): make check installs g++ (mk/deps.sh)"
golden=$PWD/tests/data/leaks-golden.txt

src=$TEST_TMP/leaks_accept.cc
prog=$TEST_TMP/leaks_accept
shm=/rip-accept-$$
trap 't_cleanup; rm -f "/dev/shm$shm"' EXIT
cp tests/integ/leaks_accept.cc "$src" || die "no tests/integ/leaks_accept.cc"
"$CXX" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$prog" "$src" || die "cannot build $src"
"$RIP" run --mem --fd --shm -q -o "$TEST_TMP/trace" -- "$prog" "$shm" >/dev/null \
	2>"$TEST_TMP/run.err" || { cat "$TEST_TMP/run.err" >&2; die "rip run failed"; }
rm -f "/dev/shm$shm"

# norm FILE: the normalised text of rip leaks
norm() {
	python3 - "$1" "$src" "$TEST_TMP" "$shm" <<'EOF'
import re, sys
text, src, tmp, shm = sys.argv[1:5]
tags = {}
for n, l in enumerate(open(src), 1):
    m = re.search(r"/\* ((?:SITE|CALL):[a-z0-9-]+) \*/", l)
    if m:
        tags[n] = m.group(1)
base = src.rsplit("/", 1)[1]

def line(l):
    l = l.replace(shm, "/rip-accept-PID").replace(tmp, "TMP")
    l = re.sub(r"0x[0-9a-f]+", "0xADDR", l)
    l = re.sub(r"\d+\.\d+(\.\.\d+\.\d+)? s\b", "T s", l)
    return re.sub(r"(%s):(\d+)\)" % re.escape(base),
                  lambda m: "%s:[%s])" % (m.group(1), tags.get(int(m.group(2)), m.group(2))), l)

paras = open(text).read().rstrip("\n").split("\n\n")
out, dropped = [], 0
m = re.fullmatch(r"(\S+): pid \d+ \((.*)\), \d+ events over \S+ s, \d+ of them resource events",
                 paras[0])
out.append("TRACE: pid PID (%s), N events over T s, N of them resource events" % m.group(2)
           if m else line(paras[0]))
for p in paras[1:]:
    ls = p.split("\n")
    if ls[0].startswith("total: "):
        out.append("\n".join(["total: (groups outside the program dropped)"] if dropped else
                             [line(x) for x in ls]))
        continue
    frames = [x for x in ls[1:] if "/%s:" % base in x]
    if not frames:
        dropped += 1
        continue
    out.append("\n".join([line(ls[0])] + [line(x) for x in frames]))
print("\n\n".join(out))
EOF
}

: >"$TEST_TMP/got"
for args in "" "--sort=count --addresses --resource=mem"; do
	# shellcheck disable=SC2086
	expect_status 0 "rip leaks $args" "$RIP" leaks $args "$TEST_TMP/trace"
	cp "$TEST_TMP/out" "$TEST_TMP/raw"
	# shellcheck disable=SC2086
	asan_run leaks $args "$TEST_TMP/trace"
	[ "$asan_rc" = 0 ] || fail "asan rip leaks $args: exit $asan_rc"
	cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/raw" || fail "asan rip leaks $args: other output"
	{
		echo "==== rip leaks${args:+ $args}"
		norm "$TEST_TMP/raw" || fail "cannot normalise rip leaks $args"
		echo
	} >>"$TEST_TMP/got"
done

if [ -n "${RIP_GOLDEN_UPDATE:-}" ]; then
	cp "$TEST_TMP/got" "$golden" || die "cannot write $golden"
	echo "note: wrote $golden: review it with git diff"
elif ! cmp -s "$golden" "$TEST_TMP/got"; then
	fail "rip leaks differs from $golden (RIP_GOLDEN_UPDATE=1 rewrites it, see the header)"
	diff -u "$golden" "$TEST_TMP/got" | head -n 60 >&2
fi
t_done
