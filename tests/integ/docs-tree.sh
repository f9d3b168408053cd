#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the guides name the tree as it is.  The README's layout names
# every source file of include/, lib/, preload/, modules/, read/, record/,
# analysis/, tools/, examples/ and mk/, and the Makefile and .ci/run (a header is named
# by itself or by the .c of the same name), and every file it names exists;
# bench/README.md's table names every file of bench/, and only those;
# doc/hacking.md's prefix table names every .c of read/, record/, analysis/
# and tools/ (tools/cmd-NAME.c for the commands), names no file that is not
# there, and every function such a file defines (not static) starts with one
# of the prefixes of its row.  A file added to a copy of the tree, a name of
# a file that is gone and a function of another prefix, each planted, fail
# the check (so the check itself can fail).  tests/ are not listed file by
# file: each test says what it checks in its Description.  Every RIP_*
# variable the code reads (getenv, or a *_ENV macro) is named in a manual
# page; doc/hacking.md names every directory of the tree and of tests/, and
# no directory that is not there.
. tests/data/common.sh

# sources ROOT: the source files the README's layout must name, one a line, from ROOT
sources() {
	(cd "$1" &&
		find include lib preload modules read record analysis tools examples mk -type f &&
		ls Makefile .ci/run) | sort
}

# check ROOT: the three guides against the tree at ROOT; prints each mismatch
check() {
	root=$1
	bad=0
	sources "$root" >"$TEST_TMP/sources"
	# shellcheck disable=SC2016 # awk's own $
	awk -v root="$root/" -v list="$TEST_TMP/sources" '
	# is p there?  A file is read (no shell a name: getline fails on what is not
	# there); a directory, "DIR/", asked of the shell (mawk will not read one)
	function exists(p,    r, x) {
		if (p ~ /\/$/)
			return !system("test -d \"" p "\"")
		r = (getline x <p)
		close(p)
		return r >= 0
	}
	# is w in text as a word of its own (a file name: letters, digits, _ . / -)?
	function named(text, w,    i, rest, before, after) {
		rest = text
		while ((i = index(rest, w)) > 0) {
			before = i > 1 ? substr(rest, i - 1, 1) : " "
			after = substr(rest, i + length(w), 1)
			if (before !~ /[A-Za-z0-9_.\/-]/ && after !~ /[A-Za-z0-9_\/-]/)
				return 1
			rest = substr(rest, i + 1)
		}
		return 0
	}
	/^## Layout/ { inlayout = 1; next }
	inlayout && /^```/ { if (started) exit; started = 1; next }
	started && /^[^ ]/ { key = $1; keys[++nk] = key; text[key] = substr($0, length($1) + 1); next }
	started && /^ / { text[key] = text[key] " " $0 }
	END {
		while ((getline f <list) > 0) {
			best = ""
			for (k = 1; k <= nk; k++)
				if (keys[k] == f || (keys[k] ~ /\/$/ && index(f, keys[k]) == 1 &&
						     length(keys[k]) > length(best)))
					best = keys[k]
			if (best == f)
				continue
			rest = substr(f, length(best) + 1)
			alt = rest
			sub(/\.h$/, ".c", alt)
			if (best == "" || (!named(text[best], rest) && !(rest ~ /\.h$/ && named(text[best], alt)))) {
				printf "README.md: the layout does not name %s\n", f
				bad = 1
			}
		}
		# every file it names is there
		for (k = 1; k <= nk; k++) {
			key = keys[k]
			if (key !~ /\/$/) {
				if (!exists(root key)) {
					printf "README.md: the layout names %s, which is not there\n", key
					bad = 1
				}
				continue
			}
			t = text[key]
			while (match(t, /[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(c|h|sh|map|in)([^A-Za-z0-9_]|$)/)) {
				w = substr(t, RSTART, RLENGTH)
				sub(/[^A-Za-z0-9_]$/, "", w)
				t = substr(t, RSTART + RLENGTH)
				if (key == "man/" || key == "doc/" || key == "tests/" || key == "bench/")
					continue
				if (!exists(root key w)) {
					printf "README.md: the layout names %s%s, which is not there\n", key, w
					bad = 1
				}
			}
		}
		exit bad
	}' "$root/README.md" || bad=1

	# bench/README.md: its table of files
	(cd "$root/bench" && ls | grep -v '^README.md$') >"$TEST_TMP/bench"
	# shellcheck disable=SC2016 # awk's own $
	awk -v root="$root/bench/" -v list="$TEST_TMP/bench" '
	# is p there?  A file is read (no shell a name: getline fails on what is not
	# there); a directory, "DIR/", asked of the shell (mawk will not read one)
	function exists(p,    r, x) {
		if (p ~ /\/$/)
			return !system("test -d \"" p "\"")
		r = (getline x <p)
		close(p)
		return r >= 0
	}
	# the first column names files; the others may name more (a program a script runs)
	/^\| `/ {
		split($0, col, "|")
		for (c = 2; c in col; c++) {
			cell = col[c]
			while (match(cell, /`[A-Za-z0-9_.-]+`/)) {
				w = substr(cell, RSTART + 1, RLENGTH - 2)
				cell = substr(cell, RSTART + RLENGTH)
				named[w] = 1
				if (c == 2 && !exists(root w)) {
					printf "bench/README.md: names %s, which is not in bench/\n", w
					bad = 1
				}
			}
		}
	}
	END {
		while ((getline f <list) > 0)
			if (!(f in named)) {
				printf "bench/README.md: its table does not name %s\n", f
				bad = 1
			}
		exit bad
	}' "$root/bench/README.md" || bad=1

	# doc/hacking.md: the prefix table against the files and what they define
	for f in "$root"/read/*.c "$root"/record/*.c "$root"/analysis/*.c "$root"/tools/*.c; do
		[ -f "$f" ] && echo "${f#"$root"/}"
	done >"$TEST_TMP/prefixed"
	# shellcheck disable=SC2016 # awk's own $
	awk -v root="$root/" -v list="$TEST_TMP/prefixed" '
	# is p there?  A file is read (no shell a name: getline fails on what is not
	# there); a directory, "DIR/", asked of the shell (mawk will not read one)
	function exists(p,    r, x) {
		if (p ~ /\/$/)
			return !system("test -d \"" p "\"")
		r = (getline x <p)
		close(p)
		return r >= 0
	}
	/^## Prefixes/ { on = 1; next }
	on && /^## / { on = 0 }
	on && /^\| `/ {
		n = split($0, col, "|")
		pre = col[2]
		nprefix[++rows] = 0
		while (match(pre, /`[A-Za-z0-9_]+`/)) {
			prefix[rows, ++nprefix[rows]] = substr(pre, RSTART + 1, RLENGTH - 2)
			pre = substr(pre, RSTART + RLENGTH)
		}
		where = col[3]
		dir = ""
		while (match(where, /`[A-Za-z0-9_.\/-]+`/)) {
			w = substr(where, RSTART + 1, RLENGTH - 2)
			where = substr(where, RSTART + RLENGTH)
			if (index(w, "/")) {
				dir = w
				sub(/[^\/]*$/, "", dir)
			} else {
				w = dir w
			}
			if (w ~ /NAME/) {
				pattern[rows] = w
				continue
			}
			row[w] = rows
			if (!exists(root w)) {
				printf "doc/hacking.md: the prefix table names %s, which is not there\n", w
				bad = 1
			}
		}
	}
	END {
		while ((getline f <list) > 0) {
			r = row[f]
			if (!r)
				for (k in pattern) {
					p = pattern[k]
					gsub(/\./, "\\.", p)
					sub(/NAME/, "[a-z0-9-]+", p)
					if (f ~ ("^" p "$"))
						r = k
				}
			if (!r) {
				printf "doc/hacking.md: the prefix table does not name %s\n", f
				bad = 1
				continue
			}
			while ((getline line <(root f)) > 0) {
				if (line !~ /^[A-Za-z_]/ || line ~ /^(typedef|struct|union|enum|extern|#)/ ||
				    line ~ /(^|[^A-Za-z0-9_])static[[:space:]]/ || line ~ /;[[:space:]]*$/ ||
				    line ~ /^(_Static_assert|int main)[[:space:]]*\(/)
					continue
				gsub(/__attribute__[[:space:]]*\(\([^)]*\)\)/, "", line)
				if (!match(line, /[A-Za-z_][A-Za-z_0-9]*[[:space:]]*\(/))
					continue
				fn = substr(line, RSTART, RLENGTH)
				sub(/[[:space:]]*\($/, "", fn)
				ok = 0
				for (i = 1; i <= nprefix[r]; i++)
					if (index(fn, prefix[r, i]) == 1)
						ok = 1
				if (!ok) {
					printf "doc/hacking.md: %s defines %s(), of no prefix of its row\n", f, fn
					bad = 1
				}
			}
			close(root f)
		}
		exit bad
	}' "$root/doc/hacking.md" || bad=1
	return $bad
}

# doc/hacking.md names every directory of the tree (and of tests/), and each it names is there
for d in */ .ci/ tests/*/; do
	case $d in build/) continue ;; esac
	[ "${d#tests/}" = "$d" ] && want="\`$d\`" || want="\`${d#tests/}\`"
	grep -qF -- "$want" doc/hacking.md || fail "doc/hacking.md does not name the directory $d"
done
grep -oE '`[a-z.][a-z]*/`' doc/hacking.md | tr -d '`' | sort -u | while read -r d; do
	[ -d "$d" ] || [ -d "tests/$d" ] || [ -d "tests/fuzz/$d" ] || [ "$d" = build/ ] ||
		echo "doc/hacking.md names the directory $d, which is not there"
done >"$TEST_TMP/dirs"
[ -s "$TEST_TMP/dirs" ] && fail "$(cat "$TEST_TMP/dirs")"

# every RIP_* variable the code reads is in a manual page, not only in doc/design.md
grep -rhoE '(getenv\("|_ENV +")RIP_[A-Z0-9_]+"' lib preload read record analysis tools include \
	modules | grep -oE 'RIP_[A-Z0-9_]+' | sort -u >"$TEST_TMP/envs"
[ -s "$TEST_TMP/envs" ] || die "no getenv(\"RIP_...\") found"
while read -r v; do
	grep -qw "$v" man/* || fail "$v is read by the code but named in no manual page (man/)"
done <"$TEST_TMP/envs"

check "$PWD" >"$TEST_TMP/found" || fail "the guides do not match the tree:
$(cat "$TEST_TMP/found")"

# the check catches what it is for, planted in a copy of the tree
mkdir -p "$TEST_TMP/tree/doc" "$TEST_TMP/tree/.ci"
cp -r include lib preload modules read record analysis tools examples mk bench Makefile README.md \
	"$TEST_TMP/tree/"
cp .ci/run "$TEST_TMP/tree/.ci/"
cp doc/hacking.md "$TEST_TMP/tree/doc/"
check "$TEST_TMP/tree" >/dev/null || fail "the copy of the tree does not pass"
for new in read/zz.c include/internal/zz.h examples/zz.c bench/zz.sh; do
	touch "$TEST_TMP/tree/$new"
	check "$TEST_TMP/tree" >"$TEST_TMP/out" && fail "a new $new was not caught"
	grep -q "zz" "$TEST_TMP/out" || fail "a new $new was caught, but not named"
	rm "$TEST_TMP/tree/$new"
done
for gone in read/ctf.c analysis/escape.c tools/http.c; do
	mv "$TEST_TMP/tree/$gone" "$TEST_TMP/tree/$gone.x"
	check "$TEST_TMP/tree" >/dev/null && fail "the names of $gone, which is gone, were not caught"
	mv "$TEST_TMP/tree/$gone.x" "$TEST_TMP/tree/$gone"
done
printf 'int zz_stray(void)\n{\n\treturn 0;\n}\n' >>"$TEST_TMP/tree/analysis/escape.c"
check "$TEST_TMP/tree" >/dev/null && fail "a function of another prefix in analysis/escape.c was not caught"
cp analysis/escape.c "$TEST_TMP/tree/analysis/escape.c"
check "$TEST_TMP/tree" >/dev/null || fail "the restored copy does not pass"
t_done
