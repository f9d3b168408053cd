#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip's heap figures agree exactly with valgrind's for real
# programs (real_valgrind in tests/data/real.sh: allocations, bytes, frees,
# blocks and bytes left at exit, no free of a block never seen): sort -n of
# 20,000 lines, xz -c of the same, and apt-config dump, a C++ program (new
# and delete through libstdc++, libapt-pkg's constructors, libstdc++'s
# emergency exception pool allocated in its own constructor).  sqlite3's
# agreement is in real-sqlite.sh.
# Timeout: 150
. tests/data/real.sh
real_need sort xz python3
seq 1 20000 | sort -R --random-source=/dev/zero >"$W/nums"
real_valgrind "sort -n" : sort -n "$W/nums"
real_valgrind "xz -c" : xz -c -3 "$W/nums"
if command -v apt-config >/dev/null 2>&1; then
	real_valgrind "apt-config dump (C++)" : apt-config dump
else
	fail "apt-config is not installed: no C++ program to compare (Debian has it)"
fi
t_done
