#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/lttng.sh - set up and tear down the LTTng-UST 2.13 session that
# bench/run.sh measures bench/events.c's "lttng" loop in.
#
#   sh bench/lttng.sh setup STATE     install the packages if missing (as root,
#                                     mk/deps-bench.sh), build
#                                     $BUILD/bench/events-lttng, start
#                                     lttng-sessiond unless one runs, create a
#                                     session, enable ripbench:count, start
#   sh bench/lttng.sh teardown STATE  stop and destroy the session, and stop
#                                     the lttng-sessiond it started (by pid)
#
# STATE is a directory of run.sh's that keeps what teardown must undo.  On
# failure, setup undoes what it did, prints one line saying why on stdout
# (the reason run.sh shows for skipping the rows) and exits 1.
#
# The session is in snapshot mode: one overwrite channel of per-UID buffers
# (4 x 1 MiB per CPU), nothing is written to disk, the way librip's rings run
# by default (flight recorder).  Every event is therefore written in full,
# none is dropped: the cost per event is that of a recorded event.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
cmd=${1:-}
state=${2:-}
[ -n "$state" ] && [ -d "$state" ] || {
	echo "usage: bench/lttng.sh setup|teardown STATE-DIR" >&2
	exit 2
}
session="ripbench-$$"

teardown() {
	if [ -s "$state/lttng.session" ]; then
		s=$(cat "$state/lttng.session")
		lttng stop "$s" >/dev/null 2>&1
		lttng destroy "$s" >/dev/null 2>&1
		rm -f "$state/lttng.session"
	fi
	if [ -s "$state/lttng.sessiond" ]; then
		pid=$(cat "$state/lttng.sessiond")
		kill "$pid" 2>/dev/null
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$pid" 2>/dev/null
		rm -f "$state/lttng.sessiond"
	fi
}

fail() {
	echo "$*"
	teardown
	exit 1
}

# the pid of the root lttng-sessiond that runs now, if any
sessiond_pid() {
	pid=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

case $cmd in
teardown)
	teardown
	exit 0
	;;
setup) ;;
*)
	echo "usage: bench/lttng.sh setup|teardown STATE-DIR" >&2
	exit 2
	;;
esac

if ! sh mk/deps-bench.sh 2>"$state/lttng.deps"; then
	fail "LTTng-UST: skipped, $(tail -n 1 "$state/lttng.deps" | sed 's/^bench: //')"
fi
[ "$(id -u)" = 0 ] || fail "LTTng-UST: skipped, lttng-sessiond runs as root here; run as root"

# the same loops as build/bench/events, plus the tracepoint loop
if ! cc -std=gnu11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Wall -Wextra \
	-Wno-unused-parameter -DBENCH_LTTNG -Iinclude -Ibench \
	$(pkg-config --cflags lttng-ust) -o "$BUILD/bench/events-lttng" \
	bench/events.c bench/lttng-tp.c -L"$BUILD" -lrip -Wl,-rpath,"$(pwd)/$BUILD" \
	$(pkg-config --libs lttng-ust) -ldl -pthread 2>"$state/lttng.cc"; then
	fail "LTTng-UST: skipped, the tracepoint provider did not build:" \
		"$(grep -m 1 error "$state/lttng.cc")"
fi

if [ -z "$(sessiond_pid)" ]; then
	echo "bench: starting lttng-sessiond --daemonize --no-kernel" >&2
	lttng-sessiond --daemonize --no-kernel >"$state/lttng.sessiond.out" 2>&1 ||
		fail "LTTng-UST: skipped, lttng-sessiond did not start:" \
			"$(tail -n 1 "$state/lttng.sessiond.out")"
	i=0
	while [ -z "$(sessiond_pid)" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	pid=$(sessiond_pid)
	[ -n "$pid" ] || fail "LTTng-UST: skipped, lttng-sessiond did not start (no pid file)"
	echo "$pid" >"$state/lttng.sessiond"
fi

# create, enable, start: each step's first error line is the reason to skip
step() {
	"$@" >"$state/lttng.out" 2>&1 ||
		fail "LTTng-UST: skipped, '$*' failed: $(grep -m 1 -i error "$state/lttng.out")"
}
step lttng create "$session" --snapshot --output="$state/lttng-snapshot"
echo "$session" >"$state/lttng.session"
step lttng enable-channel --session="$session" --userspace --overwrite \
	--subbuf-size=1M --num-subbuf=4 ripch
step lttng enable-event --session="$session" --userspace --channel=ripch ripbench:count
step lttng start "$session"
exit 0
