#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: helper of the function-tracing tests (not a test itself):
# read the JSON of `rip ps --stacks --threads --json` on stdin and print one
# line per thread or coroutine, "NAME KIND STATE: f1>f2>...>fN" (outermost
# first; "+N" after the last frame for levels deeper than kept), sorted by
# name, so that a test compares paths with a plain grep.
import json
import sys

doc = json.load(sys.stdin)
lines = []
for e in doc.get("stacks", []):
    m = e["member"]
    path = ">".join(f["function"] or "?" for f in e["frames"])
    extra = e["depth"] - len(e["frames"])
    if extra > 0:
        path += ">+%d" % extra
    lines.append("%s %s %s: %s" % (m["name"], m["kind"], m["state"], path))
for line in sorted(lines):
    print(line)
