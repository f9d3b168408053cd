#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: several recorders on one process at once.  phaseprog emits
# in numbered phases (THREADS threads x N events each), each started by a
# file the test creates, so the events emitted between two moments of the
# test are known exactly.  Under rip run (the consumer of the rings):
# phase 0 alone; then a second rip record (-d 120s, stopped by Ctrl-C)
# holds exactly phases 1 and 2; a third, attached while the second runs
# and the program is idle, ends by its --duration with no event; rip
# snapshot works while the two record; phase 3 goes to rip run alone; a
# fourth rip record, attached before phase 4, ends when the process exits
# and holds exactly phase 4.  rip run's trace holds every phase, the
# program runs to the end, babeltrace2 counts the same as rip dump, and a
# second recorder that streams to relayd is still refused, saying why.
# Then with rip record as the first recorder (RIP_MODE=block): a second
# one attached after phase 0 takes the rings over when the first gets
# Ctrl-C during the program's run; the first holds phases 0-1, the
# second 1-2, nothing lost; and when the first is killed (SIGKILL) the
# second takes over all the same, nothing lost.  Last, a second recorder stopped (SIGSTOP)
# while 80 MB of events go by: rip run loses nothing and does not wait
# for it, and its own recorded + lost events add up to those emitted.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/phaseprog
need_bin "$prog" "$RIP"
need_cmd babeltrace2
N=20000
T=4
PER=$((N * T))
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR" "$TEST_TMP/ctl"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg "$RIP" run -o prim -- "$prog" ctl 5 "$N" "$T" >prog.out 2>run.err
run=$T_LAST
phase() {
	touch "ctl/go.$1"
	wait_until 60 test -e "ctl/done.$1" || die "phase $1 did not end: $(cat run.err)"
}
phase 0
pid=$(ls "$RIP_DIR"/rip-run.*/ 2>/dev/null | sed -n 's/^rip-\([0-9]*\)-[0-9]*\.ring$/\1/p' | head -n 1)
[ -n "$pid" ] || die "no ring file of phaseprog under rip run"

# start rip record NAME ARGS...: in the background, once it says it records
start() {
	name=$1
	shift
	t_bg "$RIP" record -o "$name" "$@" "$pid" 2>"$name.err"
	wait_until 30 grep -q "recording phaseprog" "$name.err" ||
		die "rip record $name did not start: $(cat "$name.err")"
	grep -q "alongside the recorder" "$name.err" ||
		fail "rip record $name did not say it records alongside rip run: $(cat "$name.err")"
}
# finish NAME PID: its exit status must be 0
finish() {
	wait "$2"
	rc=$?
	[ "$rc" = 0 ] || fail "rip record $1: exit $rc: $(cat "$1.err")"
}

start sub1 -d 120s
sub1=$T_LAST
# not supported: a second recorder that streams to relayd; it says so and what to do
expect_status 1 "a second rip record --relayd" "$RIP" record --relayd=net://127.0.0.1:1 -o rly "$pid"
grep -q "already being recorded by pid .*cannot stream to relayd" "$TEST_TMP/err" ||
	fail "a second rip record --relayd: $(cat "$TEST_TMP/err")"
phase 1
phase 2
start sub2 -d 1s
finish sub2 "$T_LAST"
"$RIP" snapshot -o snap "$pid" >snap.out 2>snap.err ||
	fail "rip snapshot while two recorders run: $(cat snap.err)"
kill -INT "$sub1"
finish sub1 "$sub1"
phase 3
start sub3 -d 120s
sub3=$T_LAST
phase 4
finish sub3 "$sub3"
wait "$run"
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc: $(cat run.err)"
[ "$(grep -c "^phase [0-4]: $T threads emitted $N events each$" prog.out)" = 5 ] ||
	fail "phaseprog did not run to the end: $(cat prog.out)"
cat run.err sub1.err sub2.err sub3.err

# count TRACE: "P=COUNT" for each phase, sorted
count() {
	"$RIP" dump "$1" 2>"$1.dump.err" |
		awk '$3 == "phase:ev" { c[substr($4, 7)]++ } END { for (p in c) print p "=" c[p] }' |
		sort | tr '\n' ' '
}
# check TRACE EXPECTED: per phase, then babeltrace2's total after rip export
check() {
	got=$(count "$1")
	[ "$got" = "$2" ] || fail "$1 holds phases '$got', not '$2' ($(cat "$1.dump.err"))"
	want=0
	for pc in $2; do
		want=$((want + ${pc#*=}))
	done
	"$RIP" export --format=ctf "$1" -o "$1.ctf" 2>"$1.ex.err" ||
		{ fail "rip export --format=ctf $1: $(cat "$1.ex.err")"; return; }
	babeltrace2 "$1.ctf" -c sink.utils.counter -p step=+0 >"$1.bt" 2>"$1.bt.err" ||
		{ fail "babeltrace2 cannot read $1: $(grep -v WARNING "$1.bt.err" | head -n 3)"; return; }
	bt=$(awk '/Event messages/ { n = $1 } END { print n + 0 }' "$1.bt")
	[ "$bt" = "$want" ] || fail "babeltrace2 counts $bt events in $1, not $want"
	echo "$1: $got(babeltrace2: $bt)"
}
check prim "0=$PER 1=$PER 2=$PER 3=$PER 4=$PER "
check sub1 "1=$PER 2=$PER "
check sub3 "4=$PER "
[ "$(count sub2)" = "" ] || fail "sub2 recorded while the program was idle: $(count sub2)"
grep -q "^rip record: 0 events .* recorded in sub2/, 0 lost" sub2.err ||
	fail "sub2's summary: $(cat sub2.err)"
[ -n "$(count snap)" ] || fail "rip snapshot holds no event"
for s in sub1 sub3; do
	grep -q "recorded in $s/, 0 lost" "$s.err" || fail "$s lost events: $(cat "$s.err")"
done


# rip record as the consumer, stopped while the program runs: the second
# takes the rings over from where the first stopped, with no gap
mkdir -p ctl2
t_bg env RIP_RING=1 RIP_MODE=block "$prog" ctl2 3 "$N" "$T" >prog2.out
prog2=$T_LAST
wait_until 30 grep -q "^ready$" prog2.out || die "phaseprog did not open its ring file"
pid=$prog2
t_bg "$RIP" record -o first "$pid" 2>first.err
first=$T_LAST
wait_until 30 grep -q "recording phaseprog" first.err ||
	die "the first rip record did not start: $(cat first.err)"
touch ctl2/go.0
wait_until 60 test -e ctl2/done.0 || die "phase 0 did not end"
start second
second=$T_LAST
touch ctl2/go.1
wait_until 60 test -e ctl2/done.1 || die "phase 1 did not end"
kill -INT "$first"
finish first "$first"
touch ctl2/go.2
finish second "$second"
wait "$prog2" || fail "phaseprog under two rip record: exit $?"
cat first.err second.err
grep -q "took over from exactly there" second.err ||
	fail "the second rip record did not take over: $(cat second.err)"
check first "0=$PER 1=$PER "
check second "1=$PER 2=$PER "
for s in first second; do
	grep -q "recorded in $s/, 0 lost" "$s.err" || fail "$s lost events: $(cat "$s.err")"
done

# the first rip record killed (SIGKILL) while the program is idle: the
# second finds it dead, takes over from what it was sent, reads again what
# the dead one took and never sent (counting what the writers reused since:
# the killed one may not have sent all of phase 1 yet), and goes on
mkdir -p ctl4
t_bg env RIP_RING=1 RIP_MODE=block "$prog" ctl4 3 "$N" "$T" >prog4.out
prog4=$T_LAST
wait_until 30 grep -q "^ready$" prog4.out || die "phaseprog did not open its ring file"
pid=$prog4
t_bg "$RIP" record -o killed "$pid" 2>killed.err
killed=$T_LAST
wait_until 30 grep -q "recording phaseprog" killed.err ||
	die "the first rip record did not start: $(cat killed.err)"
touch ctl4/go.0
wait_until 60 test -e ctl4/done.0 || die "phase 0 did not end"
start heir
heir=$T_LAST
touch ctl4/go.1
wait_until 60 test -e ctl4/done.1 || die "phase 1 did not end"
t_kill "$killed"
wait_until 30 grep -q "pid $killed died: this one consumes the rings now" heir.err ||
	die "the second rip record did not take over: $(cat heir.err)"
touch ctl4/go.2
wait_until 60 test -e ctl4/done.2 || die "phase 2 did not end with its recorder killed"
finish heir "$heir"
wait "$prog4" || fail "phaseprog whose recorder was killed: exit $?"
cat heir.err
grep -q "died while the process ran: this one took over" heir.err ||
	fail "the second rip record did not take over from the dead one: $(cat heir.err)"
# phase 1 whole, unless the killed one had taken packets it had not sent yet and
# the writers reused them: then they are counted; phase 2 whole in any case
got=$(count heir)
gone=$(sed -n 's/.* \([0-9]*\) packets of that were gone from the rings.*/\1/p' heir.err)
case $got in
"1=$PER 2=$PER ") ;;
"1="*" 2=$PER ")
	[ "${gone:-0}" -gt 0 ] ||
		fail "heir misses events of phase 1 ($got) and counts no packet lost: $(cat heir.err)"
	echo "heir: phase 1 lost $gone packets the killed recorder had taken (counted)"
	;;
*) fail "heir holds phases '$got', not '1=$PER 2=$PER '" ;;
esac

# a second recorder that does not read (SIGSTOP) while 4 x 1,000,000 events
# (80 MB) go by: the program and rip run do not wait for it, and what is
# dropped for it alone is counted, exactly: recorded + lost = emitted
mkdir -p ctl3
BIG=1000000
t_bg "$RIP" run -o prim3 -- "$prog" ctl3 2 "$BIG" "$T" >/dev/null 2>run3.err
run3=$T_LAST
touch ctl3/go.0
wait_until 60 test -e ctl3/done.0 || die "phase 0 did not end: $(cat run3.err)"
pid=$(ls "$RIP_DIR"/rip-run.*/ 2>/dev/null | sed -n 's/^rip-\([0-9]*\)-[0-9]*\.ring$/\1/p' |
	grep -v "^$prog2$" | while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done |
	head -n 1)
[ -n "$pid" ] || die "no ring file of the third phaseprog"
start slow
slow=$T_LAST
kill -STOP "$slow"
touch ctl3/go.1
wait_until 60 test -e ctl3/done.1 || die "phase 1 did not end while a recorder was stopped"
kill -CONT "$slow"
kill -INT "$slow"
finish slow "$slow"
wait "$run3" || fail "rip run with a stopped second recorder: exit $?: $(cat run3.err)"
cat run3.err slow.err
grep -q "recorded in prim3/, 0 lost" run3.err || fail "rip run lost events: $(cat run3.err)"
line=$(grep '^rip record: [0-9]* events .* recorded in slow/' slow.err)
got=$(echo "$line" | sed 's/^rip record: \([0-9]*\) events.*/\1/')
lost=$(echo "$line" | sed -n 's/.*, \([0-9]*\) lost while recording.*/\1/p')
[ -n "$got" ] && [ -n "$lost" ] || die "no summary line: $(cat slow.err)"
[ "$((got + lost))" = "$((BIG * T))" ] ||
	fail "the stopped recorder: $got recorded + $lost lost != $((BIG * T)) emitted"
[ "$lost" -gt 0 ] || fail "the stopped recorder lost nothing: was it stopped?"
grep -q "dropped [0-9]* packets ($lost events) for this recorder" slow.err ||
	fail "the stopped recorder does not say what was dropped for it: $(cat slow.err)"
t_done
