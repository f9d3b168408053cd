#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: helper of the function-tracing tests (not a test itself):
# print a hash of the executable code of process PID's program, every
# r-xp mapping of the file EXE as /proc/PID/mem has it (the bytes patching
# changes), and the number of bytes hashed.
#   text-hash.py PID EXE
import hashlib
import os
import sys

pid, exe = sys.argv[1], os.path.realpath(sys.argv[2])
h = hashlib.sha256()
total = 0
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        f = line.split()
        if len(f) < 6 or f[1] != "r-xp" or os.path.realpath(f[5]) != exe:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        mem.seek(lo)
        data = mem.read(hi - lo)
        h.update(data)
        total += len(data)
print(h.hexdigest(), total)
