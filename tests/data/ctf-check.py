# SPDX-License-Identifier: Apache-2.0
#
# Description: checks what babeltrace2 made of a `rip snapshot` trace of
# tests/integ/evprog (used by tests/integ/ctf-*.sh and snapshot-*.sh).
#
#   ctf-check.py TRACE_DIR BT_OUT BT_ERR SUMMARY_JSON [options]
#
# BT_OUT is `babeltrace2 --clock-cycles --no-delta TRACE_DIR`, BT_ERR its
# stderr, SUMMARY_JSON the output of `rip snapshot --json`.  Checks:
#   - stderr holds nothing but "Tracer discarded N events" warnings (and,
#     with --allow-packet-loss, "discarded packets" ones), and the N add up
#     to the events the summary says were lost
#   - the events printed are the events the summary says were written, and
#     emitted = written + lost when --emitted is given
#   - time never goes back, per thread the seq numbers increase (with no gap
#     unless --allow-gaps), and the first one of each thread tells how many
#     were lost before it
#   - every field has the value evprog gave it (signed, hex, strings, odd
#     names), and each event's time is at or just after the clock value
#     the program read before emitting it (the 27-bit and extended headers
#     were rebuilt right): within 2^26 ticks of it, or, for a thread
#     preempted between the read and the event, no later than the thread's
#     next clock read
# Options: --emitted N, --threads T, --allow-gaps, --allow-packet-loss,
# --want-lost (the trace must report losses), --want-gap (some event must
# follow its predecessor by more than 2^27 ticks), --want-ext-ids (events of
# ids >= 31 must be there).
import json
import re
import sys

args = sys.argv[1:]
trace, bt_out, bt_err, summary = args[:4]
opts = args[4:]


def opt(name, default=None):
    if name in opts:
        i = opts.index(name)
        return opts[i + 1]
    return default


emitted = opt("--emitted")
emitted = int(emitted) if emitted is not None else None
threads = int(opt("--threads", "1"))
allow_gaps = "--allow-gaps" in opts
allow_pkt = "--allow-packet-loss" in opts

bad = 0


def err(msg):
    global bad
    bad += 1
    if bad <= 20:
        print("ctf-check: " + msg, file=sys.stderr)


s = json.load(open(summary))
meta = open(trace + "/metadata").read()
m = re.search(r"freq = (\d+);", meta)
freq = int(m.group(1))
ids = {}
for m in re.finditer(r'event \{\n\tname = "((?:[^"\\]|\\.)*)";\n\tid = (\d+);', meta):
    ids[m.group(1).replace('\\"', '"').replace("\\\\", "\\")] = int(m.group(2))

# stderr: only the discarded-events warnings
lost_bt = 0
for line in open(bt_err, errors="replace"):
    line = line.rstrip("\n")
    if not line.strip():
        continue
    m = re.match(r"WARNING: Tracer discarded (\d+) events between ", line)
    if m:
        lost_bt += int(m.group(1))
        continue
    if allow_pkt and re.match(r"WARNING: Tracer discarded \d+ packets? between ", line):
        continue
    err("babeltrace2 said: " + line[:200])
if lost_bt != s["events_lost"]:
    err("babeltrace2 reports %d events discarded, rip snapshot %d" % (lost_bt, s["events_lost"]))
if "--want-lost" in opts and not s["events_lost"]:
    err("the flight recorder should have wrapped: nothing lost")

line_re = re.compile(
    r"^\[(\d+)\] (\S+) (.+?): \{ tid = (-?\d+), coro = (\d+), events = (\d+), open = 0 \}, "
    r"\{ seq = (\d+)(.*) \}$")
count = 0
last_ts = -1
per = {}  # thread -> list of (n, ts)
clocked = {}  # thread -> list of (ts, clock, name, seq) of the events with a clock
seen_ext = 0
max_gap = 0
for raw in open(bt_out, errors="replace"):
    raw = raw.rstrip("\n")
    m = line_re.match(raw)
    if not m:
        err("unexpected line: " + raw[:200])
        continue
    count += 1
    ts, name, rest = int(m.group(1)), m.group(3), m.group(8)
    seq = int(m.group(7))
    t, n = seq >> 40, seq & ((1 << 40) - 1)
    # babeltrace2 orders streams by nanoseconds: cycles within one ns may swap
    if ts + freq // 10**9 + 1 < last_ts:
        err("time goes back at %s" % raw[:120])
    last_ts = max(last_ts, ts)
    lst = per.setdefault(t, [])
    if lst:
        pn, pts = lst[-1]
        if n <= pn or (not allow_gaps and n != pn + 1):
            err("thread %d: seq %d after %d" % (t, n, pn))
        if ts < pts:
            err("thread %d: time goes back at seq %d" % (t, n))
        max_gap = max(max_gap, ts - pts)
    lst.append((n, ts))
    f = dict(re.findall(r", (\w+) = (\"(?:[^\"\\]|\\.)*\"|-?\w+)", rest))
    want = None
    if name == "evprog:seq" or name.startswith("evprog:type_"):
        clocked.setdefault(t, []).append((ts, int(f.get("clock", "-1")), name, seq))
        if name.startswith("evprog:type_") and ids.get(name, 0) >= 31:
            seen_ext += 1
        continue
    if name == "evprog:signed":
        want = {"s8": -(n % 128), "s16": -(n % 32768), "s32": -((n + 2**31) % 2**32 - 2**31)}
    elif name == "evprog:wide":
        s64 = (-n * 1000003 + 2**63) % 2**64 - 2**63
        want = {"s64": s64, "hex": (n * 0x9E3779B97F4A7C15) % 2**64, "u16": n & 0xFFFF}
    elif name == "evprog:small":
        want = {"u8": n % 256, "2nd": (n ^ 0xDEADBEEF) & 0xFFFFFFFF}
    elif name == "evprog:str":
        if f.get("msg") != '"hello %d \\"q\\" \\\\"' % n:
            err("%s seq %d: msg %s" % (name, seq, f.get("msg")))
        continue
    elif name == 'evprog:odd "x"':
        want = {"event": 1, "my_field": 2, "_under": 3}
    else:
        err("unknown event " + name)
        continue
    for k, v in want.items():
        got = f.get(k)
        try:
            gv = int(got, 0)
        except (TypeError, ValueError):
            gv = None
        if gv != v:
            err("%s seq %d: %s = %s, want %d" % (name, seq, k, got, v))

# A time rebuilt wrong is off by a multiple of 2^27 ticks: 2^26 after the
# clock read tells.  A longer wait is a preemption between the read and the
# event (a loaded machine): the event still came before the thread read the
# clock for its next such event.
for t, lst in clocked.items():
    for i, (ts, c, name, seq) in enumerate(lst):
        nxt = lst[i + 1][1] if i + 1 < len(lst) else None
        if not (c <= ts and (ts < c + (1 << 26) or (nxt is not None and ts <= nxt))):
            err("%s seq %d: event time %d, clock read before it %d, next read %s" %
                (name, seq, ts, c, nxt))

if count != s["events"]:
    err("babeltrace2 printed %d events, rip snapshot wrote %d" % (count, s["events"]))
if emitted is not None and emitted != s["events"] + s["events_lost"]:
    err("emitted %d, but written %d + lost %d" % (emitted, s["events"], s["events_lost"]))
if len(per) != threads:
    err("events of %d threads, want %d" % (len(per), threads))
if not allow_gaps:
    first = sum(v[0][0] for v in per.values())
    if first != s["events_lost"]:
        err("%d events came before the first ones kept, %d reported lost" %
            (first, s["events_lost"]))
if "--want-gap" in opts and max_gap < (1 << 27):
    err("no gap over 2^27 ticks between events of a thread (largest %d)" % max_gap)
if "--want-ext-ids" in opts and not seen_ext:
    err("no event of id >= 31 in the trace")
print("ctf-check: %d events, %d threads, %d lost, %d with ids >= 31, largest gap %d ticks, "
      "%d problems" % (count, len(per), s["events_lost"], seen_ext, max_gap, bad))
sys.exit(1 if bad else 0)
