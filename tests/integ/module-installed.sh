#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a tracing module written only against the installed
# <rip/module.h>.  make install DESTDIR= puts rip, the libraries, the
# header, librip.pc and the shipped modules in a tree; a module
# (tests/data/module-widget.c) is compiled with `pkg-config --cflags
# librip` from that tree and nothing of the source tree, for a library of
# widgets the test builds; the installed rip loads it with --module=PATH,
# and rip leaks names its kind (widget) with the 3 widgets left and the
# function that made them.  The installed rip also finds the shipped
# modules under $(LIBDIR)/rip/modules (--list-modules, --module=gobject).
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 pkg-config cc make
need_libunwind

root=$TEST_TMP/root
make -s install DESTDIR="$root" PREFIX=/usr BUILD="$BUILD" >"$TEST_TMP/install.log" 2>&1 ||
	die "make install failed: $(tail -n 3 "$TEST_TMP/install.log")"
[ -e "$root/usr/include/rip/module.h" ] || die "make install did not install rip/module.h"
[ -e "$root/usr/lib/rip/modules/gobject.so" ] || fail "make install did not install the modules"

# the installed tree only: pkg-config of its librip.pc, its prefix moved under $root
cflags=$(PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
	pkg-config --cflags librip) || die "pkg-config finds no librip.pc in the installed tree"
case "$cflags" in
*"$root/usr/include"*) ;;
*) die "pkg-config --cflags librip gives '$cflags', not the installed include directory" ;;
esac
# shellcheck disable=SC2086 # pkg-config's flags, a word each
cc -shared -fPIC -O2 -Wall -Wextra -Werror $cflags -DWIDGET_MODULE -o "$TEST_TMP/widget-mod.so" \
	tests/data/module-widget.c || die "the module does not build against the installed header"
cc -shared -fPIC -O2 -DWIDGET_LIB -o "$TEST_TMP/libwidget.so" tests/data/module-widget.c ||
	die "cannot build the widget library"
cc -O0 -g -o "$TEST_TMP/widgets" tests/data/module-widget.c -L"$TEST_TMP" -lwidget \
	-Wl,-rpath,"$TEST_TMP" || die "cannot build the widget program"

rip=$root/usr/bin/rip
"$rip" run -q --module="$TEST_TMP/widget-mod.so" -o "$TEST_TMP/t" -- "$TEST_TMP/widgets" ||
	die "the installed rip run --module=PATH failed"
"$rip" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || die "rip leaks failed"
python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "rip leaks does not show the module's kind"
import json, sys
r = json.load(open(sys.argv[1]))
g = [(x["resource"], x["count"], x["bytes"], x["stack"][0]["function"], x["description"])
     for x in r["leaks"] if x.get("module")]
want = [("widget", 3, 300, "make_widget", "a widget (widget_new, widget_free)")]
if g != want:
    print("got: ", g, file=sys.stderr)
    print("want:", want, file=sys.stderr)
    sys.exit(1)
PY
"$rip" leaks "$TEST_TMP/t" | grep -q '^3 widget never released, 300 bytes (a widget' ||
	fail "the text report does not name the widget kind"

"$rip" run --list-modules >"$TEST_TMP/list" || fail "the installed rip run --list-modules failed"
for m in gobject memtransfer sqlite3; do
	grep -q -- "--module=$m: .*($root/usr/lib/rip/modules/$m.so)" "$TEST_TMP/list" ||
		fail "the installed rip does not list the module $m"
done
"$rip" run -q --module=gobject -o "$TEST_TMP/t2" -- true ||
	fail "the installed rip does not load --module=gobject"
t_done
