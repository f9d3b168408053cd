# SPDX-License-Identifier: Apache-2.0
"""
tests/data/wantleaks.py - what a test program says it left against what
rip leaks --json found, for the tests of syscall_res (preload-syscall-*):
the program prints a "want [RESOURCE] KIND FUNCTION BYTES" line for each
resource it leaves; check() counts the groups of the leaks that keep(group)
takes the same way, and exits 1 naming both when they differ.
"""
import collections
import json
import sys


def check(prog_out, leaks_json, keep, with_resource):
    want = collections.Counter()
    for line in open(prog_out).read().splitlines():
        w = line.split()
        if w[0] == "want":
            want[tuple(w[1:-1]) + (int(w[-1]),)] += 1
    assert want, "the program wants nothing"

    got = collections.Counter()
    for g in json.load(open(leaks_json))["leaks"]:
        if not keep(g):
            continue
        assert len(g["kinds"]) == 1, ("one kind per group", g["kinds"])
        # gcc may clone a function (f.constprop.0): its name is the part before the dot
        fn = g["stack"][0]["function"].split(".")[0] if g["stack"] else None
        key = (g["resource"],) if with_resource else ()
        got[key + (g["kinds"][0], fn, g["bytes"] // g["count"])] += g["count"]
    if got != want:
        print("rip leaks:", sorted(got.items()), file=sys.stderr)
        print("wanted:   ", sorted(want.items()), file=sys.stderr)
        sys.exit(1)
