#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the recorder runs before the program's threads, and the
# program keeps its own priority.  rip run and rip record lower their own
# nice value by up to 10, as far as the limits allow (doc/design.md, "A
# recorder that runs first"): the program started by rip run sees the
# nice value it was started with (0, then 5 under nice -n 5) while rip
# run's is lower (-10, -5 as root); the command --on-rotate hands each
# chunk to runs at the nice value rip was started with (5), not the
# recorder's (the reset on fork first tried gave it 0); rip record
# attached to a running program runs lower than it started, the program
# unchanged.  Where lowering is refused (no CAP_SYS_NICE, RLIMIT_NICE 0:
# setpriv takes the capability away when it can) the recorder stays where
# it was and the program still runs.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

# nice_of PID: the nice value in /proc/PID/stat (field 19: 17 after the name's parentheses)
nice_of() {
	sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f17
}

start=$(nice)
# want BASE: the recorder's nice when started at BASE: 10 lower, or as low as the limits allow
want() {
	for k in 10 9 8 7 6 5 4 3 2 1; do
		w=$(nice -n "$(($1 - start))" nice -n "-$k" nice 2>/dev/null)
		if [ -n "$w" ] && [ "$w" -lt "$1" ]; then
			echo "$w"
			return
		fi
	done
	echo "$1"
}
# shellcheck disable=SC2016 # expanded by the program's shell
show='echo "$(nice) $(sed "s/^.*) //" /proc/$PPID/stat | cut -d" " -f17)"'

check_run() { # NAME EXPECTED-PROGRAM EXPECTED-RECORDER CMD...
	name=$1 ep=$2 er=$3
	shift 3
	"$@" "$RIP" run -q -o "tr-$name" -- sh -c "$show" >"$name.out" 2>"$name.err" ||
		die "$name: rip run failed: $(cat "$name.err")"
	read -r p r <"$name.out"
	[ "$p" = "$ep" ] || fail "$name: the program runs at nice $p, not $ep as it was started"
	[ "$r" = "$er" ] || fail "$name: rip run's recorder runs at nice $r, want $er"
}

check_run plain "$start" "$(want "$start")"
check_run nice5 "$((start + 5))" "$(want "$((start + 5))")" nice -n 5
[ "$(want "$start")" = "$start" ] && skip_part "lowering a nice value is not allowed here"
# Refused: the recorder stays where it is.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice true 2>/dev/null &&
	[ "$(awk '/^Max nice priority/ { print $4 }' /proc/self/limits)" = 0 ]; then
	check_run refused "$start" "$start" setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice
fi

# --on-rotate's command runs at the nice value rip was started with
cat >hand.sh <<'SH'
#!/bin/sh
nice >>"${0%/*}/hand.nice"
SH
chmod +x hand.sh
nice -n 5 "$RIP" run -q -o tr-rot --rotate=1M --on-rotate="$PWD/hand.sh" -- "$prog" 300000 \
	--noise >rot.out 2>rot.err || die "rip run --on-rotate failed: $(cat rot.err)"
[ -s hand.nice ] || die "--on-rotate's command never ran: $(cat rot.err)"
sort -u hand.nice >hand.u
[ "$(cat hand.u)" = "$((start + 5))" ] ||
	fail "--on-rotate's command ran at nice $(tr '\n' ' ' <hand.u), not $((start + 5)) as rip was started"

# rip record of a running program
mkdir rings
t_bg env RIP_DIR="$PWD/rings" RIP_RING=1 "$prog" 100000 --rate 1000 >prog.out 2>&1
pid=$T_LAST
wait_until 20 sh -c "ls rings/*.ring >/dev/null 2>&1" || die "recprog made no ring file"
t_bg env RIP_DIR="$PWD/rings" "$RIP" record -q -d 30s -o rec "$pid" >rec.out 2>rec.err
rec=$T_LAST
lowered() { [ "$(nice_of "$rec")" = "$(want "$start")" ]; }
wait_until 5 lowered || fail "rip record runs at nice $(nice_of "$rec"), want $(want "$start")"
[ "$(nice_of "$pid")" = "$start" ] || fail "the recorded program's nice moved to $(nice_of "$pid")"
kill -INT "$rec"
wait "$rec" || fail "rip record failed: $(cat rec.err)"
t_done
