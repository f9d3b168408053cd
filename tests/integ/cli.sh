#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the rip command line.  Help exits 0 and goes to stdout (`rip
# help help` too: help's own usage; each says what its exit status means,
# and lists the options its manual page's OPTIONS has entries for and its
# synopsis names); an unknown command or option, `rip help` of no command or
# of two, `rip --version` with an argument (it was accepted silently), and
# `rip ps` without a target, exit 2 and say what to try; an empty target
# exits 1 and says so (`rip --help` lists `version` too); an
# option without its value, with a value it does not take, or abbreviated to
# several, says so; `rip ps` on a pid without a ring exits 1 with a message.
# A directory that is not a trace is named so.  `rip ls` and `rip gc` exit 1
# and name RIP_DIR when it is missing or not a directory (they print no
# table or summary then, nor with such a --dir).  `rip ls` tells a live, a
# cleanly exited and a killed program apart; `rip gc` removes the files of
# the two dead ones only.  `rip ps --still=1s PID` marks a blocked thread
# still and a thread that keeps snapping not still.  The --json outputs of
# ps, ls and gc parse as JSON.  `rip ps PID` of a process that exec'd reads
# its last image's file.
. tests/data/common.sh
prog=$BUILD/tests/integ/snapper
need_bin "$prog" "$RIP" "$BUILD/tests/integ/exec_chain" "$BUILD/librip.so"
need_cmd python3
json_ok() { python3 -c 'import json,sys; json.load(sys.stdin)' <"$1"; }

for args in "--help" "help" "help help" "help ps" "help ls" "help gc" "ps --help" "ls --help" "gc --help" \
	"ps -h" "--version"; do
	# shellcheck disable=SC2086
	expect_status 0 "rip $args" "$RIP" $args
	[ -s "$TEST_TMP/out" ] || fail "rip $args prints nothing on stdout"
done
"$RIP" help ps | grep -q '^usage: rip ps' || fail "rip help ps: no usage line"
"$RIP" help help | grep -q '^usage: rip help \[COMMAND\]' || fail "rip help help: no usage line"
"$RIP" --help | grep -q ' ps ' || fail "rip --help does not list ps"
"$RIP" --help | grep -q '^  version ' || fail "rip --help does not list version"
# an empty target is named so (it said "rip: : No such file or directory")
for c in ps leaks report dump; do
	expect_status 1 "rip $c ''" "$RIP" "$c" ''
	grep -q "^rip: an empty name: give a pid, a ring file or a trace directory\$" "$TEST_TMP/err" ||
		fail "rip $c '': $(cat "$TEST_TMP/err")"
done
# every option a command's usage lists is an entry of its manual page's
# OPTIONS, and every entry there an option of the usage
for c in $("$RIP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	case $c in help | version) continue ;; disable) page=man/rip-enable.1 ;; *) page=man/rip-$c.1 ;; esac
	"$RIP" "$c" --help | grep -oE -- '^ {2,8}(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]+' |
		grep -oE -- '--[a-z][a-z0-9-]+' | sort -u >"$TEST_TMP/usage"
	awk '/^\.SH OPTIONS/ { on = 1 } /^\.SH [^O]/ { on = 0 } on && /^\.TP/ { getline; print }' \
		"$page" | sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u >"$TEST_TMP/page"
	missing=$(comm -23 "$TEST_TMP/usage" "$TEST_TMP/page" | tr '\n' ' ')
	extra=$(comm -13 "$TEST_TMP/usage" "$TEST_TMP/page" | tr '\n' ' ')
	[ -z "$missing" ] || fail "rip $c --help lists $missing; $page has no entry for it"
	# and its synopsis names each (by its long or its short name), --help aside
	awk '/^\.SH SYNOPSIS/ { on = 1; next } /^\.SH/ { on = 0 } on' "$page" | sed 's/\\-/-/g' \
		>"$TEST_TMP/synopsis"
	"$RIP" "$c" --help | grep -oE -- '^ {2,8}(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]+' |
		sed 's/^ *//; s/,//' | while read -r short long; do
		[ -n "$long" ] || { long=$short; short=@; }
		[ "$long" = --help ] && continue
		grep -qE -- "(^|[ \"])($long|$short)([ =\"]|\$)" "$TEST_TMP/synopsis" ||
			echo "$page: the synopsis does not name $long"
	done >"$TEST_TMP/syn-missing"
	[ -s "$TEST_TMP/syn-missing" ] && fail "$(cat "$TEST_TMP/syn-missing")"
	# disable's page is enable's: its options are enable's
	[ -z "$extra" ] || [ "$c" = disable ] ||
		fail "$page has entries for $extra; rip $c --help lists no such option"
done
# every command's usage ends with what its exit status says
for c in $("$RIP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	case $c in help | version) continue ;; esac
	"$RIP" "$c" --help | grep -q '^Exit status: ' || fail "rip $c --help: no exit status"
done
for args in "" "nosuch" "help nosuch" "ps --nosuch 1" "ls --nosuch" "gc --nosuch" "ps" \
	"ps 1 2" "ps --still=soon 1" "ls extra" "--version extra" "version extra" "help ps ls"; do
	# shellcheck disable=SC2086
	expect_status 2 "rip $args" "$RIP" $args
	[ -s "$TEST_TMP/err" ] || fail "rip $args: no message on stderr"
done
# A bad option says what is wrong with it: a missing value is not an unknown option.
while IFS="|" read -r args msg; do
	# shellcheck disable=SC2086
	expect_status 2 "rip $args" "$RIP" $args
	grep -qF -- "$msg" "$TEST_TMP/err" || fail "rip $args: message: $(cat "$TEST_TMP/err")"
done <<'EOF'
ls --dir|option '--dir' needs a value
gc -d|option '-d' (--dir) needs a value
ps --still|option '--still' needs a value
leaks x --top|option '--top' needs a value
report --sort|option '--sort' needs a value
export --format|option '--format' needs a value
run -o|option '-o' (--output) needs a value
ps --json=1 1|option '--json' takes no value, not '1'
ps --st 1|option '--st' is ambiguous: --still, --stacks
ps -x 1|unknown option '-x'
dump --nosuch|unknown option '--nosuch'
EOF
expect_status 2 "rip help nosuch" "$RIP" help nosuch
grep -q "no command 'nosuch'; 'rip help' lists them" "$TEST_TMP/err" ||
	fail "rip help nosuch: message: $(cat "$TEST_TMP/err")"
expect_status 2 "rip ps (no target)" "$RIP" ps
grep -q 'pid or a ring file' "$TEST_TMP/err" || fail "rip ps: message: $(cat "$TEST_TMP/err")"
grep -q "Try 'rip ps --help'" "$TEST_TMP/err" || fail "rip ps: no hint to --help"
expect_status 1 "rip ps 999999999" "$RIP" ps 999999999
grep -q 'no ring file for pid 999999999, which is not running (a program that ended under rip run left its file in the trace: rip ps TRACE' "$TEST_TMP/err" ||
	fail "rip ps 999999999: message: $(cat "$TEST_TMP/err")"

# A directory that is no trace is said to be so, by the readers of traces too.
mkdir -p "$TEST_TMP/notrace"
for c in ps dump leaks; do
	expect_status 1 "rip $c DIR (no trace)" "$RIP" $c "$TEST_TMP/notrace"
	grep -q "notrace: not a trace: a directory without metadata" "$TEST_TMP/err" ||
		fail "rip $c DIR (no trace): message: $(cat "$TEST_TMP/err")"
done

# RIP_DIR names the one directory: missing or not a directory, ls and gc say so.
: >"$TEST_TMP/file"
for d in "$TEST_TMP/nosuch" "$TEST_TMP/file"; do
	for c in ls gc; do
		expect_status 1 "RIP_DIR=$d rip $c" env RIP_DIR="$d" "$RIP" $c
		grep -q "RIP_DIR=$d: " "$TEST_TMP/err" ||
			fail "RIP_DIR=$d rip $c: message: $(cat "$TEST_TMP/err")"
	done
	for c in ls gc; do
		for j in "" --json; do
			# shellcheck disable=SC2086 # no option: no word
			expect_status 1 "rip $c $j --dir $d" "$RIP" $c $j --dir "$d"
			[ -s "$TEST_TMP/out" ] &&
				fail "rip $c $j --dir $d: output besides the error: $(cat "$TEST_TMP/out")"
		done
	done
done

# Three programs: one alive, one that exited, one killed.
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
RIP_RING=1 "$prog" || die "snapper failed"
exited=$(ls "$RIP_DIR")
t_bg env RIP_RING=1 "$prog" wait "$TEST_TMP/ready-k"
killed=$T_LAST
wait_file "$TEST_TMP/ready-k" 60 || die "snapper (to kill) not ready"
t_kill "$killed"
t_bg env RIP_RING=1 "$prog" still "$TEST_TMP/ready-a"
alive=$T_LAST
wait_file "$TEST_TMP/ready-a" 60 || die "snapper (alive) not ready"
[ "$(ls "$RIP_DIR" | wc -l)" = 3 ] || die "want 3 ring files: $(ls "$RIP_DIR")"

expect_status 0 "rip ls" "$RIP" ls
grep -q "^$alive  *snapper  *alive " "$TEST_TMP/out" || fail "rip ls: $alive not alive"
grep -q "^$killed  *snapper  *dead " "$TEST_TMP/out" || fail "rip ls: $killed not dead"
grep -q " exited .*$exited" "$TEST_TMP/out" || fail "rip ls: $exited not exited"
[ "$(grep -c snapper "$TEST_TMP/out")" = 3 ] || fail "rip ls: want 3 rows: $(cat "$TEST_TMP/out")"
expect_status 0 "rip ls --json" "$RIP" ls --json
json_ok "$TEST_TMP/out" || fail "rip ls --json does not parse"
python3 - "$TEST_TMP/out" "$alive" "$killed" <<'PY' || fail "rip ls --json: wrong contents"
import json, sys
d = {e["pid"]: e for e in json.load(open(sys.argv[1]))}
alive, killed = int(sys.argv[2]), int(sys.argv[3])
assert len(d) == 3, d
assert d[alive]["alive"] and d[alive]["threads"] == 3, d[alive]
assert not d[killed]["alive"] and not d[killed]["exited_cleanly"], d[killed]
assert sum(e["exited_cleanly"] for e in d.values()) == 1, d
PY

# --still: the blocked thread is still, the one that keeps snapping is not.
expect_status 0 "rip ps --still=1s --threads --json PID" \
	"$RIP" ps --still=1s --threads --json "$alive"
json_ok "$TEST_TMP/out" || fail "rip ps --json does not parse"
python3 - "$TEST_TMP/out" <<'PY' || fail "--still: wrong verdicts"
import json, sys
s = {x["name"]: x for x in json.load(open(sys.argv[1]))["slots"]}
assert s["blocked"]["still"] is True, s["blocked"]
assert s["spinner"]["still"] is False, s["spinner"]
assert s["blocked"]["path"][-1]["function"] == "snapper_blocked", s["blocked"]
PY
expect_status 0 "rip ps --still=1s PID" "$RIP" ps --still 1s "$alive"
grep -q '1\* *snapper_blocked' "$TEST_TMP/out" || fail "grouped --still: blocked not marked"
grep -q ' 0  *snapper_spin' "$TEST_TMP/out" || fail "grouped --still: spinner marked still"
expect_status 0 "rip ps --json PID" "$RIP" ps --json "$alive"
json_ok "$TEST_TMP/out" || fail "rip ps --json (grouped) does not parse"

# gc: only the two dead ones go.
expect_status 0 "rip gc --dry-run" "$RIP" gc --dry-run
[ "$(ls "$RIP_DIR" | wc -l)" = 3 ] || fail "rip gc --dry-run removed files"
expect_status 0 "rip gc --json" "$RIP" gc --json
json_ok "$TEST_TMP/out" || fail "rip gc --json does not parse"
python3 -c 'import json, sys
d = json.load(sys.stdin)
assert len(d) == 2 and all(e["removed"] for e in d), d' <"$TEST_TMP/out" ||
	fail "rip gc --json: want 2 removed"
left=$(ls "$RIP_DIR")
case $left in
rip-$alive-*.ring) ;;
*) fail "after rip gc: left $left, want only the live one's" ;;
esac
expect_status 0 "rip gc (nothing to do)" "$RIP" gc
grep -q '^0 removed, 1 kept' "$TEST_TMP/out" || fail "rip gc: $(cat "$TEST_TMP/out")"
t_kill "$alive"

# A process that exec'd leaves a file per image: rip ps PID reads the last.
export RIP_DIR="$TEST_TMP/exec"
mkdir -p "$RIP_DIR"
RIP_RING=1 LD_PRELOAD="$PWD/$BUILD/librip.so" "$BUILD/tests/integ/exec_chain" stage1 ||
	die "exec_chain stage1 failed"
set -- "$RIP_DIR"/rip-*.ring
[ $# = 2 ] || die "want 2 ring files, one per image: $*"
pid=${1#"$RIP_DIR"/rip-}
pid=${pid%%-*}
expect_status 0 "rip ps PID (exec'd)" "$RIP" ps "$pid"
head -n 1 "$TEST_TMP/out" | grep -q "exited, ring .*/rip-$pid-[0-9]*\.1\.ring" ||
	fail "rip ps $pid does not read the second image's file: $(head -n 1 "$TEST_TMP/out")"
t_done
