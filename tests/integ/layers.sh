#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the layers of doc/hacking.md hold.  Includes point only along
# include/ <- lib/ <- preload/, include/ <- read/ <- analysis/ <- tools/ and
# include/ <- read/ <- record/ <- tools/ (record/ and analysis/ are beside
# each other: neither uses the other): every #include "..." in a layer names
# a header of its own layer or of one it may use (include/ through <...>);
# a header declares only functions that its own layer or one it may use
# defines (no declaration in analysis/ of a function of tools/); and read/,
# analysis/ and record/ never print to stdout or stderr, exit or parse argv
# (printf, puts, perror, stdout, stderr, exit(, getopt); read/ opens no
# file to write (O_WRONLY, O_CREAT, fopen "w"; O_RDWR only in
# read/ringfile.c, the writable mapping of a ring file).  A violation of
# each kind planted in a copy of the tree makes the check fail (so the
# check itself can fail), record/'s included.

. tests/data/common.sh

# check DIR: the rules over the tree at DIR; prints each violation.  One awk over every
# file (a shell loop per include took a second a check).
check() {
	root=$1
	find include -name '*.h' | sed 's|^include/||' >"$TEST_TMP/public"
	for layer in lib preload read analysis record tools; do
		for f in "$root/$layer"/*.c "$root/$layer"/*.h; do
			[ -f "$f" ] && echo "$f"
		done
	done >"$TEST_TMP/files"
	for f in "$root"/read/*.[ch] "$root"/analysis/*.[ch] "$root"/record/*.[ch]; do
		[ -f "$f" ] && echo "$f"
	done >"$TEST_TMP/quiet"
	# shellcheck disable=SC2016 # awk's own $
	xargs awk -v root="$root/" -v public="$TEST_TMP/public" -v quiet="$TEST_TMP/quiet" '
	BEGIN {
		ok["lib"] = "lib"
		ok["preload"] = "preload lib"
		ok["read"] = "read"
		ok["analysis"] = "analysis read"
		ok["record"] = "record read"
		ok["tools"] = "tools analysis record read"
		while ((getline h <public) > 0)
			pub[h] = 1
		while ((getline h <quiet) > 0)
			silent[h] = 1
	}
	{
		rel = substr(FILENAME, length(root) + 1)
		layer = rel
		sub(/\/.*/, "", layer)
	}
	/^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
		inc = $0
		sub(/^[^"]*"/, "", inc)
		sub(/".*/, "", inc)
		dir = inc
		if (index(inc, "/"))
			sub(/\/.*/, "", dir)
		else
			dir = layer # "x.h": the folder of the file
		allowed = inc in pub # a public header, quoted
		n = split(ok[layer], may, " ")
		for (k = 1; k <= n; k++)
			if (may[k] == dir)
				allowed = 1
		if (!allowed) {
			printf "%s:%d: includes \"%s\" (%s may use: %s, include/)\n", rel, FNR, inc,
				layer, ok[layer]
			bad = 1
		}
	}
	# functions declared at file scope in a header, and defined (not static) in a .c: a
	# header may declare only what its own layer or one it may use defines
	FILENAME ~ /\.h$/ && /^[A-Za-z_]/ && !/^(static|typedef|struct|union|enum|extern|#)/ {
		if ((name = fn_name($0)) != "")
			decl[rel ":" FNR] = name
	}
	FILENAME ~ /\.c$/ && /^[A-Za-z_]/ && !/^(static|typedef|#)/ && !/;[[:space:]]*$/ {
		if ((name = fn_name($0)) != "")
			def[name] = rel
	}
	FILENAME in silent {
		# comments and strings aside, crudely: drop // tails and /* */ lines first
		line = $0
		sub(/\/\/.*$/, "", line)
		if (line ~ /^[[:space:]]*\*/ || line ~ /^[[:space:]]*\/\*/)
			next
		if (line ~ /(^|[^a-z_])(printf|puts|perror|fputs_unlocked)[[:space:]]*\(|(^|[^a-z_])(stdout|stderr)([^a-z_]|$)|(^|[^a-z_])_?exit[[:space:]]*\(|getopt/ &&
		    line !~ /snprintf|vsnprintf|asprintf|fprintf\(out|fprintf\(f,/) {
			printf "%s:%d:%s  (read/, analysis/ and record/ never print, exit or parse argv)\n",
				rel, FNR, line
			bad = 1
		}
	}
	# read/ reads: it opens no file to write and creates none (a request that makes a traced
	# process act, such as the list of functions to patch, belongs in record/); the few words a
	# reader writes into a ring file go through the writable mapping of read/ringfile.c
	rel ~ /^read\/.*\.c$/ {
		line = $0
		sub(/\/\/.*$/, "", line)
		if (line ~ /^[[:space:]]*\*/ || line ~ /^[[:space:]]*\/\*/)
			next
		if (line ~ /O_WRONLY|O_CREAT|O_TRUNC|O_APPEND|(^|[^a-z_])(creat|truncate|mkfifo|mknod)[[:space:]]*\(|fopen[[:space:]]*\([^)]*"[wa]/ ||
		    (line ~ /O_RDWR/ && rel != "read/ringfile.c")) {
			printf "%s:%d:%s  (read/ opens no file to write: writing is record/\047s)\n",
				rel, FNR, line
			bad = 1
		}
	}
	END {
		for (at in decl) {
			name = decl[at]
			if (!(name in def))
				continue
			dl = at
			sub(/\/.*/, "", dl)
			fl = def[name]
			sub(/\/.*/, "", fl)
			if (dl == fl || index(" " ok[dl] " ", " " fl " "))
				continue
			printf "%s: declares %s(), defined in %s (%s may use: %s)\n", at, name, def[name],
				dl, ok[dl]
			bad = 1
		}

		exit bad
	}
	# the name of the function a line declares or defines: the word before its first "(",
	# attributes aside; "" when there is none
	function fn_name(line) {
		gsub(/__attribute__[[:space:]]*\(\([^)]*\)\)/, "", line)
		if (!match(line, /[A-Za-z_][A-Za-z_0-9]*[[:space:]]*\(/))
			return ""
		line = substr(line, RSTART, RLENGTH)
		sub(/[[:space:]]*\($/, "", line)
		return line ~ /^(_Static_assert|static_assert)$/ ? "" : line
	}' <"$TEST_TMP/files"
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
# record/: above read/ only, below tools/, beside analysis/, and silent
for plant in "record/consume.c:tools/tool.h:tools/ from record/" \
	"record/consume.c:analysis/leaks.h:analysis/ from record/" \
	"read/trace.c:record/tracew.h:record/ from read/" \
	"analysis/cpu.c:record/samples.h:record/ from analysis/"; do
	file=${plant%%:*}
	rest=${plant#*:}
	echo "#include \"${rest%%:*}\"" >>"$TEST_TMP/tree/$file"
	check "$TEST_TMP/tree" >/dev/null && fail "an include of ${rest#*:} was not caught"
	cp "$file" "$TEST_TMP/tree/$file"
done
for call in 'printf("x")' 'fprintf(stderr, "x")' 'exit(1)' 'getopt(0, 0, "")'; do
	printf 'static void f(void) { %s; }\n' "$call" >>"$TEST_TMP/tree/record/family.c"
	check "$TEST_TMP/tree" >/dev/null && fail "$call in record/ was not caught"
	cp record/family.c "$TEST_TMP/tree/record/family.c"
done
# read/ writing a file: creating one, opening one to write
for plant in 'open(p, O_WRONLY | O_CREAT | O_EXCL, 0600)' 'open(p, O_RDWR)' 'fileno(fopen(p, "w"))'; do
	printf 'static int f(const char *p) { return %s; }\n' "$plant" >>"$TEST_TMP/tree/read/trace.c"
	check "$TEST_TMP/tree" >/dev/null && fail "$plant in read/ was not caught"
	cp read/trace.c "$TEST_TMP/tree/read/trace.c"
done
# a header of a lower layer that declares what a higher one (or a sibling) defines
for plant in "analysis/report.h:int rh_page(FILE *out, const char *json, size_t len);:tools/" \
	"record/consume.h:const char *lk_kind_name(uint32_t cat, uint64_t kind);:analysis/"; do
	file=${plant%%:*}
	rest=${plant#*:}
	echo "${rest%%:*}" >>"$TEST_TMP/tree/$file"
	check "$TEST_TMP/tree" >/dev/null &&
		fail "a declaration in $file of a function of ${rest#*:} was not caught"
	cp "$file" "$TEST_TMP/tree/$file"
done
check "$TEST_TMP/tree" >/dev/null || fail "the restored copy does not pass"

t_done
