#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a signal rip run was started with ignored stays ignored in
# the program, and rip neither takes nor passes it on, as exec leaves it
# for a program run alone.  rip run set the signals it passes on (INT,
# TERM, HUP, QUIT, USR1, USR2) and SIGCHLD to their defaults in the
# program: under nohup, the program died of the SIGHUP of the terminal
# that closed (exit 129), and a script's background job, which ignores
# SIGINT and SIGQUIT, took them.  Checked: the ignored signals the program
# sees (SigIgn of /proc/self/status) under nohup, in a script's background
# job and with SIGCHLD ignored by the caller, the same as without rip; a
# SIGHUP to `nohup rip run` ends neither, and a SIGTERM still goes on.
. tests/data/common.sh
need_bin "$RIP"
need_cmd nohup python3
cd "$TEST_TMP" || die "no TEST_TMP"

# sigign FILE: the mask of ignored signals in the SigIgn line FILE holds
sigign() {
	sed -n 's/^SigIgn:[[:space:]]*//p' "$1"
}

nohup grep SigIgn /proc/self/status >plain.1 2>/dev/null || die "nohup grep"
nohup "$RIP" run -q -o t1 -- grep SigIgn /proc/self/status >rip.1 2>err.1 ||
	fail "nohup rip run: $(cat err.1)"
[ "$(sigign rip.1)" = "$(sigign plain.1)" ] ||
	fail "under nohup the program ignores $(sigign rip.1), alone $(sigign plain.1)"

sh -c 'grep SigIgn /proc/self/status & wait' >plain.2
sh -c '"$1" run -q -o t2 -- grep SigIgn /proc/self/status & wait' sh "$RIP" >rip.2 2>err.2
[ "$(sigign rip.2)" = "$(sigign plain.2)" ] ||
	fail "in a background job the program ignores $(sigign rip.2), alone $(sigign plain.2)"

# the caller ignores SIGCHLD (its children reap themselves): so does the program
ign_chld='import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execvp(sys.argv[1], sys.argv[1:])'
python3 -c "$ign_chld" grep SigIgn /proc/self/status >plain.3
python3 -c "$ign_chld" "$RIP" run -q -o t3 -- grep SigIgn /proc/self/status >rip.3 2>err.3 ||
	fail "rip run with SIGCHLD ignored: $(cat err.3)"
[ "$(sigign rip.3)" = "$(sigign plain.3)" ] ||
	fail "with SIGCHLD ignored the program ignores $(sigign rip.3), alone $(sigign plain.3)"

# the terminal's hangup: rip and the program live on; SIGTERM still reaches the program
nohup "$RIP" run -q -o t4 -- sleep 30 >/dev/null 2>err.4 &
run=$!
T_PIDS="$T_PIDS $run"
wait_until 30 pgrep -P "$run" -x sleep >/dev/null || die "no sleep under rip run"
kill -HUP "$run"
sleep 0.5
kill -0 "$run" 2>/dev/null || fail "nohup rip run died of SIGHUP: $(cat err.4)"
pgrep -P "$run" -x sleep >/dev/null || fail "the program under nohup rip run died of SIGHUP"
kill -TERM "$run"
wait "$run"
rc=$?
[ "$rc" = 143 ] || fail "SIGTERM to nohup rip run: exit $rc, want 143 (the program's): $(cat err.4)"
t_done
