#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run finds the TSC's rate once per boot: the first run
# measures it and keeps it with the boot's id in $XDG_CACHE_HOME/rip/clock
# (a 0600 file), later runs hand that rate down in RIP_CLOCK_HZ without
# measuring; another boot's rate, a malformed or out-of-range one is
# measured again and replaced; a symlink in the file's place is not
# followed; RIP_CLOCK=mono hands nothing down.
. tests/data/common.sh
need_bin "$RIP"
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo &&
	[ "$(cat "$cs" 2>/dev/null)" = tsc ] ||
	skip "the TSC does not keep time here (rip run hands no rate down)"
boot=$(cat /proc/sys/kernel/random/boot_id) || skip "no boot id"
export XDG_CACHE_HOME="$TEST_TMP/cache"
unset RIP_CLOCK_HZ RIP_CLOCK
f=$XDG_CACHE_HOME/rip/clock
n=0

# hz: got= the rate the traced program was handed
hz() {
	n=$((n + 1))
	"$RIP" run -o "$TEST_TMP/t$n" -- sh -c 'echo "$RIP_CLOCK_HZ"' >"$TEST_TMP/out$n" \
		2>"$TEST_TMP/err$n" || fail "rip run $n: $(tail -n 1 "$TEST_TMP/err$n")"
	got=$(cat "$TEST_TMP/out$n")
}

hz
[ -n "$got" ] && [ "$got" -ge 1000000 ] 2>/dev/null || fail "first run: no rate handed down ('$got')"
[ -f "$f" ] && [ ! -L "$f" ] || fail "first run: no $f"
[ "$(stat -c %a "$f" 2>/dev/null)" = 600 ] || fail "$f: mode $(stat -c %a "$f" 2>/dev/null), want 600"
[ "$(cat "$f" 2>/dev/null)" = "$boot $got" ] || fail "$f holds '$(cat "$f" 2>/dev/null)', want '$boot $got'"

echo "$boot 1234567890" >"$f"
hz
[ "$got" = 1234567890 ] || fail "the kept rate was not used: '$got'"

for bad in "00000000-0000-0000-0000-000000000000 1234567890" "garbage" "$boot 12" \
	"$boot 99999999999999999999999" "$boot 1234567890x" "$boot"; do
	printf '%s\n' "$bad" >"$f"
	hz
	{ [ "$got" != 1234567890 ] && [ "$got" -ge 1000000 ]; } 2>/dev/null ||
		fail "kept '$bad': handed '$got' down"
	[ "$(cat "$f")" = "$boot $got" ] || fail "kept '$bad': not replaced ('$(cat "$f")')"
done

echo keep >"$TEST_TMP/target"
rm -f "$f"
ln -s "$TEST_TMP/target" "$f"
hz
[ "$(cat "$TEST_TMP/target")" = keep ] || fail "the symlink in the cache's place was followed"
[ -L "$f" ] && fail "the symlink is still there: nothing was kept"
[ "$(cat "$f" 2>/dev/null)" = "$boot $got" ] || fail "after the symlink: '$(cat "$f" 2>/dev/null)'"

RIP_CLOCK=mono
export RIP_CLOCK
hz
unset RIP_CLOCK
[ -z "$got" ] || fail "RIP_CLOCK=mono: '$got' handed down"
ls -A "$XDG_CACHE_HOME/rip" | grep -q '^\.clock' && fail "a temporary file was left behind"
t_done
