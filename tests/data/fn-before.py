#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: helper of the function-tracing tests (not a test itself):
# read the JSON of `rip report --functions --json` on stdin and print
# "FUNCTION CALLS BEFORE RUNNING" per function, sorted by name (BEFORE: the
# calls that began before the trace, a forked child's calls open at the
# fork), then the totals ("no_entry N" ..., "before N").
import json
import sys

doc = json.load(sys.stdin)
for f in sorted(doc["functions"], key=lambda f: f["function"]):
    print("%s %d %d %d" % (f["function"], f["calls"], f["before"], f["running"]))
for k in ("entries", "exits", "no_entry", "no_exit", "running", "before", "ids_unknown", "id0"):
    print("%s %d" % (k, doc[k]))
