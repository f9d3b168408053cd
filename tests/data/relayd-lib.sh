# SPDX-License-Identifier: Apache-2.0
#
# Description: helpers of the integ/relayd-*.sh tests (not a test itself):
# start lttng-relayd on three free loopback ports with a private home and
# output directory (retried on other ports if one was taken meanwhile),
# stop it by pid, find the trace it wrote, and read a session live with
# babeltrace2.
#
#	relayd_need			fail without lttng-relayd or babeltrace2 (make check
#					installs them)
#	relayd_start NAME		RD_C, RD_D, RD_L (ports), RD_OUT, RD_PID, RD_URL
#	relayd_stop			SIGTERM, then SIGKILL; reaped
#	relayd_copy HOST SESSION	prints the directory of relayd's copy
#	live_start OUT HOST SESSION	babeltrace2 net://.../host/HOST/SESSION > OUT
#					in the background (LIVE_PID); ends with the session
#	live_wait SECONDS		wait for it to end; its status in LIVE_RC

relayd_need() {
	need_cmd lttng-relayd babeltrace2
}

# rd_listening PORT: is something listening on PORT?  /proc/net/tcp and tcp6 (what
# ss reads; iproute2 is not always installed): a local address ending in the port
# in hex, in state 0A (LISTEN).
rd_listening() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p="$(printf ':%04X' "$1")" \
			'$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }'
}

rd_all_listen() {
	rd_listening "$RD_C" && rd_listening "$RD_D" && rd_listening "$RD_L"
}

# rd_up: relayd listens on its three ports, or is gone
rd_up() {
	! kill -0 "$RD_PID" 2>/dev/null || rd_all_listen
}

relayd_start() {
	rd_name=$1
	for attempt in 1 2 3 4 5 6 7 8; do
		base=$(( ($$ * 7 + attempt * 1009 + $(date +%N | sed 's/^0*//;s/^$/0/') % 997) % 30000 + 20000 ))
		RD_C=$base RD_D=$((base + 1)) RD_L=$((base + 2))
		if rd_listening "$RD_C" || rd_listening "$RD_D" || rd_listening "$RD_L"; then
			continue
		fi
		RD_OUT=$TEST_TMP/$rd_name-out
		mkdir -p "$TEST_TMP/$rd_name-home"
		LTTNG_HOME=$TEST_TMP/$rd_name-home t_bg lttng-relayd \
			-C "tcp://127.0.0.1:$RD_C" -D "tcp://127.0.0.1:$RD_D" \
			-L "tcp://127.0.0.1:$RD_L" -o "$RD_OUT" \
			>"$TEST_TMP/$rd_name.log" 2>&1
		RD_PID=$T_LAST
		# listening, or gone (a port taken after we looked): then other ports
		wait_until 20 rd_up
		if kill -0 "$RD_PID" 2>/dev/null && rd_all_listen; then
			# shellcheck disable=SC2034 # for the tests that source this file
			RD_URL=net://127.0.0.1:$RD_C:$RD_D
			return 0
		fi
		t_kill "$RD_PID"
	done
	die "lttng-relayd would not start (see $TEST_TMP/$rd_name.log)"
}

relayd_stop() {
	kill "$RD_PID" 2>/dev/null
	wait_until 10 sh -c "! kill -0 $RD_PID 2>/dev/null"
	t_kill "$RD_PID"
}

relayd_copy() {
	for d in "$RD_OUT/$1/$2"-*; do
		[ -d "$d" ] && echo "$d"
	done | tail -n 1
}

live_start() {
	t_bg sh -c "exec babeltrace2 'net://127.0.0.1:$RD_L/host/$2/$3' \
		--params 'session-not-found-action=\"end\"' >'$1' 2>'$1.err'"
	LIVE_PID=$T_LAST
}

live_wait() {
	if ! wait_until "$1" sh -c "! kill -0 $LIVE_PID 2>/dev/null"; then
		LIVE_RC=timeout
		t_kill "$LIVE_PID"
		return 1
	fi
	wait "$LIVE_PID" 2>/dev/null
	# shellcheck disable=SC2034 # for the tests that source this file
	LIVE_RC=$?
	return 0
}

# session_listed HOST SESSION: does relayd serve it live yet?
session_listed() {
	babeltrace2 query src.ctf.lttng-live sessions -p "url=\"net://127.0.0.1:$RD_L\"" \
		2>/dev/null | grep -q "$1/$2"
}
