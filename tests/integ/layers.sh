#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the layers of doc/hacking.md hold.  Includes point only along
# include/ <- lib/ <- preload/ and include/ <- read/ <- analysis/ <- tools/:
# every #include "..." in a layer names a header of its own layer or of one
# it may use (include/ through <...>), and read/ and analysis/ never print
# to stdout or stderr, exit or parse argv (printf, puts, perror, stdout,
# stderr, exit(, getopt).  A violation planted in a copy of the tree makes
# the check fail (so the check itself can fail).
. tests/data/common.sh

# check DIR: the rules over the tree at DIR; prints each violation
check() {
	root=$1
	bad=0
	for layer in lib preload read analysis record tools; do
		case $layer in
		lib) ok="lib" ;;
		preload) ok="preload lib" ;;
		read) ok="read" ;;
		analysis) ok="analysis read" ;;
		record) ok="record read" ;;
		tools) ok="tools analysis record read" ;;
		esac
		for f in "$root/$layer"/*.c "$root/$layer"/*.h; do
			[ -f "$f" ] || continue
			grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
				sed 's/^\([0-9]*\):.*"\(.*\)".*/\1 \2/' >"$TEST_TMP/inc"
			while read -r line inc; do
				dir=${inc%%/*}
				[ "$dir" = "$inc" ] && dir=$layer # "x.h": the file's own folder
				allowed=0
				[ -f "include/$inc" ] && allowed=1 # a public header, quoted
				for d in $ok; do
					[ "$d" = "$dir" ] && allowed=1
				done
				if [ $allowed = 0 ]; then
					echo "${f#"$root"/}:$line: includes \"$inc\" ($layer may use: $ok, include/)"
					bad=1
				fi
			done <"$TEST_TMP/inc"
		done
	done
	for f in "$root"/read/*.[ch] "$root"/analysis/*.[ch] "$root"/record/*.[ch]; do
		[ -f "$f" ] || continue
		# comments and strings aside, crudely: drop // and /* */ lines first
		sed -e 's://.*$::' -e '/^[[:space:]]*\*/d' -e '/^[[:space:]]*\/\*/d' "$f" |
			grep -nE '(^|[^a-z_])(printf|puts|perror|fputs_unlocked)[[:space:]]*\(|(^|[^a-z_])(stdout|stderr)([^a-z_]|$)|(^|[^a-z_])_?exit[[:space:]]*\(|getopt' |
			grep -v 'snprintf\|vsnprintf\|asprintf\|fprintf(out\|fprintf(f,' |
			sed "s|^|${f#"$root"/}:|" >"$TEST_TMP/pr"
		if [ -s "$TEST_TMP/pr" ]; then
			sed 's/$/  (read\/, analysis\/ and record\/ never print, exit or parse argv)/' "$TEST_TMP/pr"
			bad=1
		fi
	done
	return $bad
}

check "$PWD" >"$TEST_TMP/violations" || fail "the layers are broken: $(cat "$TEST_TMP/violations")"

# the check catches a planted violation of each kind
mkdir -p "$TEST_TMP/tree"
cp -r lib preload read analysis record tools "$TEST_TMP/tree/"
echo '#include "tools/tool.h"' >>"$TEST_TMP/tree/read/evread.c"
check "$TEST_TMP/tree" >/dev/null && fail "an include of tools/ from read/ was not caught"
cp read/evread.c "$TEST_TMP/tree/read/evread.c"
printf 'static void f(void) { fprintf(stderr, "x"); exit(1); }\n' >>"$TEST_TMP/tree/analysis/leaks.c"
check "$TEST_TMP/tree" >/dev/null && fail "printing and exit in analysis/ were not caught"
cp analysis/leaks.c "$TEST_TMP/tree/analysis/leaks.c"
echo '#include "read/evread.h"' >>"$TEST_TMP/tree/lib/ring.c"
check "$TEST_TMP/tree" >/dev/null && fail "an include of read/ from lib/ was not caught"
cp lib/ring.c "$TEST_TMP/tree/lib/ring.c"
check "$TEST_TMP/tree" >/dev/null || fail "the restored copy does not pass"
t_done
