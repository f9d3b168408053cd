#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# mk/deps-bench.sh - the optional packages of the LTTng-UST comparison in
# `make bench`: lttng-tools (lttng, lttng-sessiond) and liblttng-ust-dev
# (the tracepoint headers, liblttng-ust and its pkg-config file).
#
#   mk/deps-bench.sh    exit 0 when both are there (installing them first
#                       with apt-get when it can: root, or sudo without a
#                       password), 1 otherwise, with the exact line to run
#   mk/deps-bench.sh heaptrack    the same for heaptrack (bench/heaptrack.sh)
#   mk/deps-bench.sh eu-stack     the same for elfutils and gdb (bench/ps-watch.sh)
#   mk/deps-bench.sh uftrace      the same for uftrace (bench/funcs.sh)
#
# It says on stderr what it installs.  The benchmark skips its LTTng rows,
# with this script's message, when it fails: LTTng is a peer to compare
# against, never a dependency of librip.
set -u

need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }

what="LTTng-UST"
if [ "${1:-}" = heaptrack ]; then # bench/heaptrack.sh's peer, asked for on its own
	what="heaptrack"
	have_cmd heaptrack || need=" heaptrack"
elif [ "${1:-}" = eu-stack ]; then # bench/ps-watch.sh's peers
	what="eu-stack and gdb"
	have_cmd eu-stack || need=" elfutils"
	have_cmd gdb || need="$need gdb"
elif [ "${1:-}" = uftrace ]; then # bench/funcs.sh's peer (tests/integ/func-uftrace too)
	what="uftrace"
	have_cmd uftrace || need=" uftrace"
else
	have_cmd pkg-config || need="$need pkg-config"
	have_cmd lttng-sessiond && have_cmd lttng || need="$need lttng-tools"
	pkg-config --exists lttng-ust 2>/dev/null || need="$need liblttng-ust-dev"
fi
[ -z "$need" ] && exit 0

line="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" = 0 ]; then
	sudo=""
elif have_cmd sudo && sudo -n true 2>/dev/null; then
	sudo="sudo"
else
	echo "bench: $what missing ($need ); as root run:  apt-get update && $line" >&2
	exit 1
fi
echo "bench: installing the $what comparison's packages: $line" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # a list of packages
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends $need; } \
	>&2; then
	echo "bench: installing failed; run:  apt-get update && $line" >&2
	exit 1
fi
exit 0
