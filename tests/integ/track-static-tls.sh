#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --track on a program that dlopens a library with
# initial-exec TLS (a static TLS block, as many C extensions and
# graphics drivers have).  glibc keeps a small surplus of static TLS for
# such libraries, and librip-track.so, audited in a namespace of its own
# with a libc of its own, took most of it: the dlopen failed with "cannot
# allocate memory in static TLS block" where the program alone, and under
# rip run without --track, loads it.  rip run now raises the surplus
# (glibc.rtld.optional_static_tls in GLIBC_TUNABLES) when it audits,
# keeping a value the user gave; the program loads the library, and its
# regcomp calls are still traced.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-track.so"
need_cmd python3

CC=${CC:-cc}
# 1400 bytes: within glibc's default surplus (1664), beyond what --track left of it
cat >"$TEST_TMP/tls.c" <<'C'
static __thread char big[1400] __attribute__((tls_model("initial-exec")));
int tls_touch(int i)
{
	big[i % sizeof(big)] = (char)i;
	return big[i % sizeof(big)];
}
C
cat >"$TEST_TMP/main.c" <<'C'
#include <dlfcn.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*touch)(int);
	regex_t re;

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	touch = (int (*)(int))dlsym(h, "tls_touch");
	if (regcomp(&re, "a*b", 0))
		return 1;
	printf("touched %d\n", touch(7));
	printf("tunables %s\n", getenv("GLIBC_TUNABLES") ? getenv("GLIBC_TUNABLES") : "");
	return 0;
}
C
"$CC" -shared -fPIC -o "$TEST_TMP/libtls.so" "$TEST_TMP/tls.c" || die "cannot build libtls.so"
"$CC" -o "$TEST_TMP/main" "$TEST_TMP/main.c" -ldl || die "cannot build main"
# the library must load untraced, or the test says nothing
"$TEST_TMP/main" "$TEST_TMP/libtls.so" >"$TEST_TMP/plain" || die "main fails untraced: $(cat "$TEST_TMP/plain")"

for tun in "" "glibc.malloc.tcache_count=0"; do
	expect_status 0 "rip run --track (GLIBC_TUNABLES='$tun')" env ${tun:+GLIBC_TUNABLES=$tun} \
		"$RIP" run -o "$TEST_TMP/tr$tun" --track='regex=regcomp(1),regfree(1)' -- \
		"$TEST_TMP/main" "$TEST_TMP/libtls.so"
	grep -q '^touched 7$' "$TEST_TMP/out" ||
		fail "GLIBC_TUNABLES='$tun': the library did not load: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
	grep -q "^tunables .*$tun" "$TEST_TMP/out" ||
		fail "the user's GLIBC_TUNABLES '$tun' is lost: $(cat "$TEST_TMP/out")"
	expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/tr$tun"
	python3 - "$TEST_TMP/out" <<'PY' || fail "GLIBC_TUNABLES='$tun': the regex leak is not reported"
import json, sys
r = json.load(open(sys.argv[1]))
assert sum(g["count"] for g in r["leaks"] if g["resource"] == "regex") == 1, r["leaks"]
PY
done
t_done
