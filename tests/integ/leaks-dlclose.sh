#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the frames of a plugin that was dlclose'd are named.  A
# program dlopens libplug.so, leaks 31337 bytes from plug_leak, dlcloses
# it, then the same with a copy (libplug2.so).  The module map is rescanned
# at safe points only, none of which came between the dlopen and the
# dlclose: the object never got in the map, and both leaks' innermost
# frames were "in no module".  dlclose's hook rescans first: both are
# plug_leak, in a libplug object.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
CC=${CC:-cc}
nosym=${RIP_TEST_NOSYM:-0}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >plug.c <<'C'
#include <stdlib.h>

__attribute__((noinline)) void *plug_leak(void)
{
	return malloc(31337);
}
C
cat >dl.c <<'C'
#include <dlfcn.h>

static void once(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	void *(*f)(void);

	if (!h)
		_exit(2);
	f = (void *(*)(void))dlsym(h, "plug_leak");
	f();
	dlclose(h);
}

int main(void)
{
	once("./libplug.so");
	once("./libplug2.so");
	return 0;
}
C
sed -i 's/^#include <dlfcn.h>$/#include <dlfcn.h>\n#include <unistd.h>/' dl.c
"$CC" -O1 -g -shared -fPIC -o libplug.so plug.c && cp libplug.so libplug2.so &&
	"$CC" -O1 -g -o dl dl.c -ldl || die "cannot build the test programs"
"$RIP" run -q --mem -o t -- ./dl 2>run.err || fail "rip run: $(cat run.err)"
"$RIP" leaks --json t >l.json 2>l.err || fail "rip leaks: $(cat l.err)"
python3 - l.json "$nosym" <<'PY' || fail "the plugin's frames are not named"
import json, sys
d = json.load(open(sys.argv[1]))
nosym = sys.argv[2] == "1"
g = [x for x in d["leaks"] if x["resource"] == "mem" and x["bytes"] == 31337]
mods = sorted((x["stack"][0].get("module") or "").rsplit("/", 1)[-1] for x in g if x["stack"])
funcs = [x["stack"][0].get("function") for x in g if x["stack"]]
# (the two objects were loaded at one address: which of them each frame names is not checked)
ok = len(g) == 2 and all(m.startswith("libplug") for m in mods) and \
    (nosym or funcs == ["plug_leak", "plug_leak"])
if not ok:
    print("groups %d, modules %s, functions %s" % (len(g), mods, funcs), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
t_done
