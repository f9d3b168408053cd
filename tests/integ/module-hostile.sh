#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --module reads a module's file (its rip_modinfo
# section) before anything runs, and treats it as hostile.  Damaged copies
# of build/modules/gobject.so (truncated anywhere, section headers and the
# section's offset and size out of the file, records without their NULs or
# with bad names, and 60 copies with random bytes changed in the headers
# and the records, seeded) given to the ASan build of rip with
# --list-modules (nothing runs): each is taken (0) or refused as a usage
# error that names the file (2), never a crash or a sanitizer report.  A
# library that is no module and a text file are refused with the reason.
. tests/data/common.sh
need_bin "$RIP_ASAN" "$BUILD/modules/gobject.so"
need_cmd python3

bad=$TEST_TMP/bad
mkdir -p "$bad"
python3 - "$BUILD/modules/gobject.so" "$bad" <<'PY' || die "cannot make the damaged modules"
import random, struct, sys
src, out = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read())
def put(name, b):
    open(f"{out}/{name}.so", "wb").write(bytes(b))
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
# the rip_modinfo section's header
strtab_off, = struct.unpack_from("<Q", d, shoff + shstrndx * 64 + 24)
mi = None
for i in range(shnum):
    h = shoff + i * 64
    name, = struct.unpack_from("<I", d, h)
    if d[strtab_off + name:strtab_off + name + 12] == b"rip_modinfo\0":
        mi = h
assert mi is not None, "no rip_modinfo in the module"
mi_off, mi_size = struct.unpack_from("<QQ", d, mi + 24)
for n in (0, 10, 63, 64, 200, len(d) // 2, mi_off + 8, len(d) - 1):
    put(f"trunc-{n}", d[:n])
def patched(name, off, fmt, val):
    b = bytearray(d)
    struct.pack_into(fmt, b, off, val)
    put(name, b)
patched("shoff-out", 0x28, "<Q", len(d) + 4096)
patched("shoff-huge", 0x28, "<Q", (1 << 64) - 16)
patched("shnum-huge", 0x3c, "<H", 0xffff)
patched("shstrndx-out", 0x3e, "<H", 0xfffe)
patched("sect-off-out", mi + 24, "<Q", len(d) + 1)
patched("sect-off-huge", mi + 24, "<Q", (1 << 64) - 8)
patched("sect-size-huge", mi + 32, "<Q", (1 << 63))
patched("sect-size-odd", mi + 32, "<Q", 3)
patched("name-off-out", mi, "<I", 0xfffffff0)
# records: a name with no NUL, a description with no NUL, a bad character
rec = mi_off
b = bytearray(d); b[rec + 24:rec + 24 + 48] = b"x" * 48; put("name-nonul", b)
b = bytearray(d); b[rec + 72:rec + 72 + 96] = b"y" * 96; put("desc-nonul", b)
b = bytearray(d); b[rec + 24] = ord("/"); put("name-slash", b)
rnd = random.Random(29)
for i in range(60):
    b = bytearray(d)
    for _ in range(8):
        if rnd.random() < 0.5:
            p = rnd.randrange(shoff, min(len(b), shoff + shnum * 64))
        else:
            p = rnd.randrange(mi_off, mi_off + mi_size)
        b[p] = rnd.randrange(256)
    put(f"flip-{i:03d}", b)
PY
cp /lib/x86_64-linux-gnu/libm.so.6 "$bad/nomodule.so" 2>/dev/null ||
	cp "$BUILD/librip.so" "$bad/nomodule.so"
echo "not an ELF file" >"$bad/text.so"

taken=0 refused=0
for f in "$bad"/*.so; do
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98 \
		"$RIP_ASAN" run --module="$f" --list-modules >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	if grep -Eq 'Sanitizer|runtime error:' "$TEST_TMP/err" ||
		{ [ $rc != 0 ] && [ $rc != 2 ]; }; then
		fail "$(basename "$f"): exit $rc"
		head -n 15 "$TEST_TMP/err" >&2
	elif [ $rc = 2 ]; then
		grep -q "$f" "$TEST_TMP/err" ||
			fail "$(basename "$f"): refused without naming the file"
		refused=$((refused + 1))
	else
		taken=$((taken + 1))
	fi
done
echo "taken $taken, refused $refused"
[ "$refused" -ge 20 ] || fail "only $refused damaged modules refused"
"$RIP_ASAN" run --module="$bad/nomodule.so" --list-modules 2>&1 | grep -q 'not a tracing module' ||
	fail "a library that is no module is not refused as such"
"$RIP_ASAN" run --module="$bad/text.so" --list-modules 2>&1 | grep -q 'not a shared object' ||
	fail "a text file is not refused as such"
t_done
