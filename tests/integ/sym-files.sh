#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: read/sym.c on real files, through the driver
# build/tests/unit/symq: a PIE and a non-PIE executable, a shared library at
# a nonzero bias, stripped binaries whose debug file is found by build-id
# (--debug-dir) and by .gnu_debuglink (next to the binary, under a debug
# dir, under a sysroot), C++ demangling with and without DWARF, a binary
# rebuilt since the trace, missing and non-ELF files, the vDSO, and the
# speed of a big CU.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
CXX=${CXX:-g++}
T=${TEST_TMP:-$(mktemp -d)}
Q=$PWD/$BUILD/tests/unit/symq
# no network lookups from libdwfl while testing
unset DEBUGINFOD_URLS

# make check installs them all (gcc, g++ and binutils): a missing one is a failure
for tool in "$CC" "$CXX" objcopy nm readelf; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool is not installed: make check installs it (or run sh mk/deps.sh check)"
		exit 1
	fi
done
[ -x "$Q" ] || {
	echo "missing $Q (run make tests)"
	exit 1
}

fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect OUTPUT PATTERN WHAT: an extended regexp that must match a line
expect() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		echo "ok: $3"
	else
		fail "$3: no line matches '$2' in:"
		printf '%s\n' "$1" | sed 's/^/    /'
	fi
}

reject() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		fail "$3: a line matches '$2' in:"
		printf '%s\n' "$1" | sed 's/^/    /'
	else
		echo "ok: $3"
	fi
}

# sym FILE NAME [OFF]: the ELF address of symbol NAME in FILE plus OFF, in hex
sym() {
	v=$(nm "$1" | awk -v n="$2" '$3 == n { print $1; exit }')
	[ -n "$v" ] || {
		echo "no symbol $2 in $1" >&2
		v=0
	}
	printf '0x%x' $((0x$v + ${3:-0}))
}

# at ADDR BIAS: the runtime address
at() {
	printf '0x%x' $(($1 + $2))
}

build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'
}

cd "$T" || exit 1
cat >prog.c <<'EOF'
#include <stdio.h>
int target(int x) { int y = x * 3; return y + 1; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", target(argc)); return 0; }
#if defined(REBUILT) || defined(OTHER)
int extra(void) { return 7; }
#endif
EOF
cat >lib.c <<'EOF'
/* a library */
int lib_func(int x) { int y = x + 42; return y * 2; }
EOF

# -- PIE at a typical bias
$CC -g -O0 -fPIE -pie -o pie prog.c || exit 1
B=0x555555554000
A=$(at "$(sym pie target 4)" $B)
out=$("$Q" -m "$T/pie@$B" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/pie$" "PIE executable"
reject "$out" "^problem" "PIE: no problem"

# -- non-PIE: bias 0, addresses are the ELF's own
$CC -g -O0 -no-pie -o nopie prog.c || exit 1
A=$(sym nopie target 4)
out=$("$Q" -m "$T/nopie@0" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/nopie$" "non-PIE executable"

# -- shared library at a nonzero bias, next to the executable
$CC -g -O0 -fPIC -shared -o libt.so lib.c || exit 1
LB=0x7f1234560000
A=$(at "$(sym libt.so lib_func 4)" $LB)
A2=$(at "$(sym pie target 4)" $B)
out=$("$Q" -m "$T/pie@$B" -m "$T/libt.so@$LB" "$A" "$A2")
expect "$out" "^$A 0 lib_func lib\.c:2 - $T/libt\.so$" "shared library at bias $LB"
expect "$out" "^$A2 0 target prog\.c:2 - $T/pie$" "executable next to the library"

# -- stripped, debug file by build-id under --debug-dir
objcopy --only-keep-debug pie pie.debug || exit 1
objcopy --strip-all pie pie.stripped || exit 1
ID=$(build_id pie)
[ -n "$ID" ] || fail "no build-id in pie"
mkdir -p "dbg/.build-id/$(echo "$ID" | cut -c1-2)"
cp pie.debug "dbg/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-).debug"
A=$(at "$(sym pie target 4)" $B)
out=$("$Q" -d "$T/dbg" -m "$T/pie.stripped@$B" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/pie\.stripped$" "stripped: debug file by build-id"
reject "$out" "^problem" "stripped with debug file: no problem"
out=$("$Q" -m "$T/pie.stripped@$B" "$A")
expect "$out" "^$A 0 \?\? " "stripped without debug file: no name"
expect "$out" "^problem $T/pie\.stripped: no symbols \(1\)" "stripped without debug file: reported"
# a relative --debug-dir works too
out=$(cd "$T" && "$Q" -d dbg -m "$T/pie.stripped@$B" "$A")
expect "$out" "^$A 0 target prog\.c:2 " "relative --debug-dir"

# -- stripped without build-id, debug file by .gnu_debuglink
$CC -g -O0 -Wl,--build-id=none -o nobid prog.c || exit 1
objcopy --only-keep-debug nobid nobid.debug || exit 1
objcopy --strip-all --add-gnu-debuglink=nobid.debug nobid nobid.s || exit 1
mkdir -p bin && mv nobid.s bin/nobid && cp nobid.debug bin/
A=$(sym nobid target 4)
NB=0x555555550000
A=$(at "$A" $NB)
out=$("$Q" -m "$T/bin/nobid@$NB" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/bin/nobid$" "debuglink next to the binary"
rm bin/nobid.debug
out=$("$Q" -m "$T/bin/nobid@$NB" "$A")
expect "$out" "^problem $T/bin/nobid: no symbols" "debuglink target gone: reported"
mkdir -p "dbg2$T/bin" && cp nobid.debug "dbg2$T/bin/"
out=$("$Q" -d "$T/dbg2" -m "$T/bin/nobid@$NB" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/bin/nobid$" "debuglink under --debug-dir"
# a debug file that does not match (CRC) is not used
$CC -g -O0 -Wl,--build-id=none -DOTHER -o other.debug prog.c && cp other.debug "bin/nobid.debug"
out=$("$Q" -m "$T/bin/nobid@$NB" "$A")
reject "$out" "^$A 0 target" "debuglink with a wrong CRC is ignored"
rm -f bin/nobid.debug

# -- a sysroot: the module path is the traced host's, files live under root/
mkdir -p root/usr/bin "root/usr/lib/debug/usr/bin"
cp bin/nobid root/usr/bin/prog
cp nobid.debug root/usr/lib/debug/usr/bin/
out=$("$Q" -s "$T/root" -m "/usr/bin/prog@$NB" "$A")
expect "$out" "^$A 0 target prog\.c:2 - /usr/bin/prog$" \
	"sysroot, debuglink under its /usr/lib/debug"
out=$("$Q" -m "/usr/bin/prog@$NB@$T/root/usr/bin/prog" "$A")
expect "$out" "^problem /usr/bin/prog: not found \(1\)" "without the sysroot: not found"

# -- C++: demangled from DWARF, and from the symbol table without DWARF
cat >cxx.cc <<'EOF'
namespace ns { struct K { int method(int x); }; }
int ns::K::method(int x) { int y = x * 2; return y + 1; }
template <typename T> T twice(T v) { T w = v + v; return w; }
static int local_fn(long a) { long b = a * 3; return (int)b; }
namespace { int anon_fn(int x, double d) { int z = x + (int)d; return z; } }
int main() { ns::K k; return k.method(1) + (int)twice<long>(2) + local_fn(3) + anon_fn(1, 2.0); }
EOF
$CXX -g -O0 -o cxx cxx.cc || exit 1
$CXX -O0 -o cxx.nodebug cxx.cc || exit 1
A=$(at "$(sym cxx _ZN2ns1K6methodEi 4)" $B)
A2=$(at "$(sym cxx _Z5twiceIlET_S0_ 4)" $B)
out=$("$Q" -m "$T/cxx@$B" "$A" "$A2")
expect "$out" "^$A 0 ns::K::method\(int\) cxx\.cc:2 " "C++ method demangled (DWARF)"
expect "$out" "^$A2 0 long twice<long>\(long\) cxx\.cc:3 " "C++ template demangled (DWARF)"
# internal linkage: the DWARF has no linkage name, the symbol table's mangled one says the rest
A=$(at "$(sym cxx _ZL8local_fnl 4)" $B)
A2=$(at "$(sym cxx _ZN12_GLOBAL__N_17anon_fnEid 4)" $B)
out=$("$Q" -m "$T/cxx@$B" "$A" "$A2")
expect "$out" "^$A 0 local_fn\(long\) cxx\.cc:4 " "C++ static function with its parameters (DWARF)"
expect "$out" "^$A2 0 \(anonymous namespace\)::anon_fn\(int, double\) cxx\.cc:5 " \
	"C++ function of an anonymous namespace, qualified (DWARF)"
A=$(at "$(sym cxx.nodebug _ZN2ns1K6methodEi 4)" $B)
out=$("$Q" -m "$T/cxx.nodebug@$B" "$A")
expect "$out" "^$A 0 ns::K::method\(int\) \?\?:0 " "C++ demangled (symbol table)"
expect "$out" "^problem $T/cxx\.nodebug: no debug info \(function names only\) \(1\)" \
	"no DWARF: reported"

# -- rebuilt since the trace: the recorded build-id is the old one
cp pie pie.old
$CC -g -O0 -fPIE -pie -DREBUILT -o pie.new prog.c || exit 1
[ "$(build_id pie.old)" != "$(build_id pie.new)" ] || fail "rebuild kept the build-id"
A=$(at "$(sym pie.old target 4)" $B)
out=$("$Q" -m "$T/pie.new@$B@$T/pie.old" "$A" "$A")
expect "$out" "^$A 0 \?\? \?\?:0 - $T/pie\.new$" "rebuilt: not resolved from the new file"
# (the one address looked up twice counts once)
expect "$out" "^problem $T/pie\.new: build-id differs: rebuilt since the trace\? \(1\)" \
	"rebuilt: build-id mismatch reported"
# ... unless the debug file of the recorded build-id is at hand
out=$("$Q" -d "$T/dbg" -m "$T/pie.new@$B@$T/pie.old" "$A")
expect "$out" "^$A 0 target prog\.c:2 - $T/pie\.new$" "rebuilt: resolved from the old debug file"
reject "$out" "^problem" "rebuilt with the old debug file: no problem"

# -- hostile modules, the vDSO, addresses in no module
echo "not an ELF" >text
head -c 100 pie >trunc
rm -f fifo && mkfifo fifo
out=$("$Q" -x "0x1000:0x2000:0x1000:$T/missing" -x "0x2000:0x3000:0x2000:$T/text" \
	-x "0x3000:0x4000:0x3000:$T/trunc" -x "0x5000:0x4000:0:$T/pie" \
	-x "0x6000:0x7000:0x6000:$T/fifo" \
	-X 0x7fff0000:0x7fff2000:0x7fff0000 \
	-x "0x1000:0x9000:0x1000:$T/pie" \
	0x1010 0x2010 0x3010 0x6010 0x7fff0100 0x10 0x8010)
expect "$out" "^module $T/pie: -22$" "absurd range refused"
expect "$out" "^0x1010 0 \?\? \?\?:0 - $T/missing$" "missing file: first added wins"
expect "$out" "^problem $T/missing: not found \(1\)" "missing file reported"
expect "$out" "^problem $T/text: not an ELF file \(1\)" "text file reported"
expect "$out" "^problem $T/trunc: not an ELF file \(1\)" "truncated ELF reported"
expect "$out" "^problem $T/fifo: not an ELF file \(1\)" "a FIFO is no ELF file (and no hang)"
expect "$out" "^0x7fff0100 0 \?\? \?\?:0 - \[vdso\]$" "vDSO"
reject "$out" "^problem \[vdso\]" "vDSO is no problem"
expect "$out" "^0x10 0 \?\? \?\?:0 - \?\?$" "address in no module"

# -- speed: every byte of a program with one big CU full of inlined calls
awk 'BEGIN {
	print "static inline __attribute__((always_inline)) int sq(int x) { return x * x; }"
	for (i = 0; i < 3000; i++)
		printf "__attribute__((noinline)) int f%d(int x) { int s = 0; " \
			"for (int i = 0; i < x; i++) s += sq(i ^ %d); return s; }\n", i, i
	print "int main(void) { return f1(3); }"
}' >big.c
$CC -g -O2 -o big big.c || exit 1
out=$("$Q" -m "$T/big@$B" -b)
echo "$out" | grep '^bench'
secs=$(printf '%s\n' "$out" | awk '/^bench/ { print int($6) }')
lookups=$(printf '%s\n' "$out" | awk '/^bench/ { print $2 }')
named=$(printf '%s\n' "$out" | awk '/^bench/ { print $4 }')
[ "${lookups:-0}" -gt 100000 ] || fail "bench: too few lookups ($lookups)"
[ $((${named:-0} * 2)) -gt "${lookups:-0}" ] || fail "bench: only $named of $lookups named"
[ "${secs:-999}" -lt 30 ] || fail "bench: $secs s"
A=$(at "$(sym big f77 0)" $B)
out=$("$Q" -m "$T/big@$B" "$A")
expect "$out" "^$A 0 f77 big\.c:79 " "big CU: function f77"

if [ "$fails" -gt 0 ]; then
	echo "$fails failed"
	exit 1
fi
exit 0
