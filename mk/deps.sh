#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# mk/deps.sh - make sure the Debian packages librip needs are installed.
#   mk/deps.sh build   libraries to build (libdw, libelf)
#   mk/deps.sh check   also the programs the tests and benchmarks drive
# Installs what is missing with apt-get when it can (root, or sudo without a
# password); otherwise prints the exact apt-get line to run and fails.
set -u
what=${1:-build}

need=""
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
have_cmd() { command -v "$1" >/dev/null 2>&1; }

command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
have_pc libdw || need="$need libdw-dev"
have_pc libelf || need="$need libelf-dev"
have_pc libunwind || need="$need libunwind-dev"
have_pc zlib || need="$need zlib1g-dev"
# compressed ring files (read/unpack.c)
have_pc libzstd || need="$need libzstd-dev"
if [ "$what" = check ]; then
	have_cmd valgrind || need="$need valgrind"
	# the C++ programs of the leak tests (tests/integ/leaks_accept.cc), tests/integ/headers.sh
	have_cmd c++ || have_cmd g++ || need="$need g++"
	have_cmd python3 || need="$need python3"
	have_cmd gdb || need="$need gdb"
	have_cmd strace || need="$need strace"
	# tests/integ/ring-bombs.sh: compressed ring files, the time and memory of rip ls
	have_cmd zstd || need="$need zstd"
	have_cmd /usr/bin/time || need="$need time"
	have_cmd sqlite3 || need="$need sqlite3"
	# the programs of the module tests (tests/integ/module-*.sh): GLib's GObject, SQLite;
	# SQLite for rip run --track's too (tests/integ/trackprog.c)
	have_pc gobject-2.0 || need="$need libglib2.0-dev"
	have_pc sqlite3 || need="$need libsqlite3-dev"
	have_cmd git || need="$need git"
	# libc's DWARF, for the names and lines of its frames (tests/integ/sym-libc-names.sh)
	[ -d /usr/share/doc/libc6-dbg ] || need="$need libc6-dbg"
	# the real programs of tests/integ/real-*.sh (any rustc found will do)
	{ have_cmd java && have_cmd javac; } || need="$need default-jdk-headless"
	have_cmd rustc || need="$need rustc"
	have_cmd node || need="$need nodejs"
	have_cmd perl || need="$need perl"
	have_cmd make || need="$need make"
	have_cmd gcc || need="$need gcc"
	have_cmd tar || need="$need tar"
	have_cmd xz || need="$need xz-utils"
	have_cmd curl || need="$need curl"
	have_cmd timeout || need="$need coreutils"
	have_cmd babeltrace2 || need="$need babeltrace2"
	# lttng-relayd, which the tests/integ/relayd-*.sh tests stream to
	have_cmd lttng-relayd || need="$need lttng-tools"
	# go tool pprof reads rip export --format=pprof (tests/integ/export-pprof.sh)
	have_cmd go || need="$need golang-go"
	have_cmd dot || need="$need graphviz"
	have_cmd chromium || need="$need chromium"
	# the second compiler of make check and of tests/integ/headers.sh
	have_cmd clang || need="$need clang"
	# tests/integ/shellcheck.sh: every script make check runs
	have_cmd shellcheck || need="$need shellcheck"
	# tests/integ/clang-format.sh: the version that formats the library's sources
	have_cmd clang-format-14 || need="$need clang-format-14"
	# make cross-aarch64 (tests/integ/cross-aarch64.sh): the cross compiler and its libc
	have_cmd aarch64-linux-gnu-gcc || need="$need gcc-aarch64-linux-gnu"
	[ -e /usr/aarch64-linux-gnu/include/stdio.h ] || need="$need libc6-dev-arm64-cross"
	# clang's AddressSanitizer runtime for the reader tests
	[ -n "$(find /usr/lib/llvm-*/lib/clang/*/lib/linux -name 'libclang_rt.asan-x86_64.a' 2>/dev/null | head -n 1)" ] ||
		gcc -print-file-name=libasan.so 2>/dev/null | grep -q / || need="$need libasan8"
	# libFuzzer, for the harnesses of tests/fuzz (make fuzz, tests/integ/fuzz.sh): in the
	# runtime package of the clang installed (of Debian's default clang when none is yet)
	if have_cmd clang; then
		[ -e "$(clang --print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$(uname -m).a" ] ||
			need="$need libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
	else
		need="$need libclang-rt-dev"
	fi
	# ThreadSanitizer's runtime for the concurrency tests (build/tsan)
	[ -n "$(find /usr/lib/llvm-*/lib/clang/*/lib/linux -name 'libclang_rt.tsan-x86_64.a' 2>/dev/null | head -n 1)" ] ||
		gcc -print-file-name=libtsan.so 2>/dev/null | grep -q / || need="$need libtsan2"
fi
[ -z "$need" ] && exit 0

line="apt-get install -y --no-install-recommends$need"
echo "librip: missing Debian packages:$need" >&2
if [ "$(id -u)" = 0 ]; then
	sudo=""
elif have_cmd sudo && sudo -n true 2>/dev/null; then
	sudo="sudo"
else
	echo "librip: run as root:  apt-get update && $line" >&2
	exit 1
fi
echo "librip: installing them: $line" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # a list of packages
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends $need; } >&2; then
	echo "librip: installing failed; run:  apt-get update && $line" >&2
	exit 1
fi
exit 0
