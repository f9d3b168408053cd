#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: helper of the function-tracing tests (not a test itself):
# read the JSON of `rip report --functions --json` on stdin and print
# "FUNCTION CALLS RUNNING" per function, sorted by name, then the totals
# ("no_entry N" ...), and with --threads "THREAD|KIND|NAME FUNCTION CALLS"
# per thread and coroutine.
import json
import sys

doc = json.load(sys.stdin)
for f in sorted(doc["functions"], key=lambda f: f["function"]):
    print("%s %d %d" % (f["function"], f["calls"], f["running"]))
for k in ("entries", "exits", "no_entry", "no_exit", "running", "ids_unknown", "id0"):
    print("%s %d" % (k, doc[k]))
for t in doc.get("threads", []):
    for f in sorted(t["functions"], key=lambda f: f["function"]):
        print("%s|%s %s %d" % (t["kind"], t["name"], f["function"], f["calls"]))
