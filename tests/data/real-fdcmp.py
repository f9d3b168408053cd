# SPDX-License-Identifier: Apache-2.0
#
# Description: compare the descriptors rip recorded with what strace saw
# in the same run (not a test itself; tests/integ/real-strace.sh runs it).
#
#   real-fdcmp.py DIR STRACE-LOG... -- DUMP...
#
# The STRACE-LOGs are LOG.TID of `strace -ff -y -o LOG rip run --fd ... --
# PROG` (a file per thread, so that no call is split; fd numbers decorated
# with their paths), each DUMP the output of `rip dump` of one
# trace of that run.  Only descriptors on files under DIR count: the
# loader's, the preload library's and the terminal's are not the program's
# work.  From strace: every successful open, openat, openat2 and creat that
# returned a descriptor on a path under DIR, and every close of such a
# descriptor (explicit, or by dup2/dup3 onto it), in order, per thread.
# Descriptors made by dup, dup2, dup3 and fcntl are left out on both sides:
# rip does not record which descriptor they copy, so it cannot say whose
# file they are on.  From rip: its fd:open events
# with such a path (relative paths are taken as strace resolved them), or on
# a descriptor open on one (which strace cannot have), and its fd:close
# events of the descriptors they made.  The two lists of
# (open, fd, path) and (close, fd) must be equal, process by process; prints
# the counts and exits 0, or prints the first difference and exits 1.
import re
import sys

top = sys.argv[1].rstrip("/") + "/"
sep = sys.argv.index("--")
logs, dumps = sys.argv[2:sep], sys.argv[sep + 1:]

OPEN = re.compile(r'^(?:open|openat|openat2|creat)\(.*\) += (\d+)<([^>]*)>$')
DUP = re.compile(r'^(?:dup|dup2|dup3|fcntl)\(.*\) += (\d+)<([^>]*)>$')
CLOSE = re.compile(r'^close\((\d+)<([^>]*)>\) += 0$')
strace = {}
for log in logs:
    tid = int(log.rsplit(".", 1)[1])
    ev = strace.setdefault(tid, [])
    live, dups = set(), set()
    for line in open(log, errors="replace"):
        line = line.rstrip("\n")
        m = OPEN.match(line)
        if m and m.group(2).startswith(top):
            fd = int(m.group(1))
            live.add(fd)
            dups.discard(fd)
            ev.append(("open", fd, m.group(2)))
            continue
        m = DUP.match(line)
        if m:
            fd = int(m.group(1))
            if fd in live:  # dup2/dup3 onto one of ours closes it
                live.discard(fd)
                ev.append(("close", fd))
            dups.add(fd)
            continue
        m = CLOSE.match(line)
        if m:
            fd = int(m.group(1))
            if fd in live:
                live.discard(fd)
                ev.append(("close", fd))
            dups.discard(fd)
    if not ev:
        del strace[tid]

# 0.000245200 cp/7040 fd:open fd=3 bt=1 kind=opendir flags=589824 path="/tmp/fs/src"
EV = re.compile(r'^\S+ \S*/(\d+)(?: \[\S*\])? fd:(open|close) fd=(\d+)(.*)$')
PATH = re.compile(r' path="((?:[^"\\]|\\.)*)"')
KIND = re.compile(r' kind=(\S+)')
rip = {}
for d in dumps:
    live = {}
    for line in open(d, errors="replace"):
        m = EV.match(line.rstrip("\n"))
        if not m:
            continue
        tid, op, fd = int(m.group(1)), m.group(2), int(m.group(3))
        if op == "open":
            p = PATH.search(m.group(4))
            path = p.group(1) if p else ""
            kind = KIND.search(m.group(4))
            if kind and kind.group(1) in ("dup", "dup2", "dup3", "fcntl_dupfd"):
                # no path: its source is not recorded; strace's dups are left out too
                live.pop(fd, None)
                continue
            # an open of a descriptor that is open on one of ours: strace
            # saw no such open, so it is a difference too
            if path.startswith(top) or (path and not path.startswith("/")) or fd in live:
                live[fd] = path
                rip.setdefault(tid, []).append(("open", fd, path))
        elif fd in live:
            del live[fd]
            rip.setdefault(tid, []).append(("close", fd))


def same(s, r):
    if s[0] != r[0] or s[1] != r[1]:
        return False
    if s[0] == "close":
        return True
    return s[2] == r[2] or (not r[2].startswith("/") and s[2].endswith("/" + r[2].lstrip("./")))


# threads of one process write with their tid: strace names the same tid
bad = 0
for pid in sorted(set(strace) | set(rip)):
    s, r = strace.get(pid, []), rip.get(pid, [])
    n = min(len(s), len(r))
    k = next((i for i in range(n) if not same(s[i], r[i])), n)
    if k < n or len(s) != len(r):
        bad += 1
        print("pid %d: strace %d events, rip %d; first difference at %d:" % (pid, len(s), len(r), k))
        print("  strace: %s" % (s[k:k + 3],))
        print("  rip:    %s" % (r[k:k + 3],))
    else:
        opens = sum(1 for e in s if e[0] == "open")
        print("pid %d: %d opens and %d closes, the same in strace and rip" % (pid, opens, len(s) - opens))
if not strace:
    print("strace saw no descriptor under %s" % top)
    bad += 1
sys.exit(1 if bad else 0)
