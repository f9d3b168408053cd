#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the undefined behaviours the fuzzing of the readers found, one
# check each on the ASan/UBSan build of rip.  A UBSan abort exits 1, the status
# of an ordinary refusal, so every run is judged by its status AND by its
# stderr (no "runtime error", no sanitizer report):
#   - rip pagemap on a valid trace of /bin/true (qsort of an empty array);
#   - a ring file whose ev_ctl_off or ev_off lies inside the file but is not
#     8-byte aligned: refused, no misaligned load;
#   - clock_base_ns and realtime_offset at int64_t's limits, in a ring file
#     and in a trace's .rip-index: refused (they overflowed when added);
#   - a clock that puts the events' times beyond int64_t (rate 1 Hz, base
#     0): times saturate, rip dump and rip leaks read it without overflow.
. tests/data/common.sh
prog=$BUILD/tests/integ/dumpprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
[ -e "$BUILD/librip-preload.so" ] || die "no $BUILD/librip-preload.so: run make"
command -v python3 >/dev/null || die "python3 is needed to damage the files"

# ubsan_ok WHAT WANT_RC [MESSAGE]: the last asan_run exited WANT_RC, said MESSAGE
# (an ERE) when given, and reported no sanitizer finding (asan_run fails those).
ubsan_ok() {
	[ "$asan_rc" = "$2" ] || fail "$1: exit $asan_rc, want $2: $(head -n 2 "$TEST_TMP/asan.err")"
	if [ -n "${3:-}" ]; then
		grep -Eq "^rip: .*$3" "$TEST_TMP/asan.err" ||
			fail "$1: message does not say '$3': $(head -n 2 "$TEST_TMP/asan.err")"
	fi
	if grep -Eq 'runtime error|AddressSanitizer' "$TEST_TMP/asan.err"; then
		fail "$1: sanitizer report"
	fi
}

# patch SRC DST OFFSET FMT VALUE: copy SRC to DST with one field overwritten.
patch() {
	python3 - "$@" <<'PY' || die "patch $*: failed"
import struct, sys
src, dst, off, fmt, val = sys.argv[1:6]
b = bytearray(open(src, "rb").read())
struct.pack_into(fmt, b, int(off), int(val, 0))
open(dst, "wb").write(b)
PY
}

# 1. qsort(NULL, 0, ...) in pm_count_map: a trace of /bin/true under rip run --mem.
"$RIP" run -q --mem -o "$TEST_TMP/true" -- /bin/true || die "rip run --mem /bin/true failed"
asan_run pagemap "$TEST_TMP/true"
ubsan_ok "pagemap of /bin/true" 0

# A ring file with events (struct rip_file_hdr: ev_ctl_off 120, ev_off 128,
# clock_hz 1544, clock_base_ticks 1552, clock_base_ns 1560, realtime_offset 1568).
ring=$(RIP_SLOTS=4096 RIP_EVENT_SMALL_RINGS=64 "$prog" fill 300) || die "dumpprog fill failed"
[ -s "$ring" ] || die "dumpprog made no ring file ($ring)"
asan_run dump "$ring"
ubsan_ok "intact ring" 0

# 2. offsets that are in the file but not aligned
for f in 120:ev_ctl_off 128:ev_off; do
	off=${f%%:*} name=${f#*:}
	cur=$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(), int(sys.argv[2]))[0])' "$ring" "$off")
	patch "$ring" "$TEST_TMP/$name.ring" "$off" "<Q" "$((cur + 4))"
	asan_run dump "$TEST_TMP/$name.ring"
	ubsan_ok "$name + 4" 1 "not a multiple of 8"
done

# 3. clock fields at int64_t's limits, in the ring file
patch "$ring" "$TEST_TMP/base.ring" 1560 "<Q" 0x7fffffffffffffff
asan_run dump "$TEST_TMP/base.ring"
ubsan_ok "ring: clock_base_ns INT64_MAX" 1 "clock base .* out of range"
patch "$ring" "$TEST_TMP/rt.ring" 1568 "<q" 0x7fffffffffffffff
asan_run dump "$TEST_TMP/rt.ring"
ubsan_ok "ring: realtime_offset INT64_MAX" 1 "realtime offset .* out of range"
patch "$ring" "$TEST_TMP/rtneg.ring" 1568 "<q" -0x8000000000000000
asan_run dump "$TEST_TMP/rtneg.ring"
ubsan_ok "ring: realtime_offset INT64_MIN" 1 "realtime offset .* out of range"

# ... and in a trace's index (the ring file's header at byte 56 of .rip-index)
tr=$TEST_TMP/true
for f in "1616:<Q:0x7fffffffffffffff:clock base" "1624:<q:0x7fffffffffffffff:realtime offset"; do
	off=${f%%:*} rest=${f#*:}
	fmt=${rest%%:*} rest=${rest#*:}
	val=${rest%%:*} want=${rest#*:}
	rm -rf "$TEST_TMP/idx"
	cp -r "$tr" "$TEST_TMP/idx"
	patch "$tr/.rip-index" "$TEST_TMP/idx/.rip-index" "$off" "$fmt" "$val"
	asan_run dump "$TEST_TMP/idx"
	ubsan_ok "trace: $want at int64_t's limit" 1 "$want .* out of range"
done

# 4. times beyond int64_t from a valid header: 1 Hz from tick 0 (every event's
# time in ns is its tick count times 1e9), the largest base and offset allowed.
patch "$ring" "$TEST_TMP/slow.ring" 1544 "<Q" 1
patch "$TEST_TMP/slow.ring" "$TEST_TMP/slow.ring" 1552 "<Q" 0
patch "$TEST_TMP/slow.ring" "$TEST_TMP/slow.ring" 1560 "<Q" $((1 << 62))
patch "$TEST_TMP/slow.ring" "$TEST_TMP/slow.ring" 1568 "<q" $((1 << 62))
asan_run dump "$TEST_TMP/slow.ring"
ubsan_ok "ring: times past int64_t (dump)" 0
grep -q '^300 events' "$TEST_TMP/asan.out" || fail "slow clock: dump lost events: $(tail -n 1 "$TEST_TMP/asan.out")"
asan_run leaks "$TEST_TMP/slow.ring"
ubsan_ok "ring: times past int64_t (leaks)" 0
t_done
