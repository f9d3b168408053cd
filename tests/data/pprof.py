#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# tests/data/pprof.py - a reader of pprof profiles (profile.proto, gzipped or
# not) for the tests, written from the field numbers of profile.proto and
# independent of rip's writer: it decodes the protobuf wire format itself and
# checks what a consumer relies on (every id a sample or location names
# exists, string indices are in range, one value per sample type).
#
#   pprof.py summary FILE         JSON: sample types, samples, locations...
#   pprof.py folded FILE TYPE [N] "outermost;...;leaf VALUE" per distinct stack,
#                                 sorted, values of sample type TYPE (0s left out),
#                                 as rip export --format=folded writes them (which
#                                 cuts names at N bytes: 255)
#   pprof.py count FILE           the number of samples (top-level fields only: fast)
#   pprof.py samples FILE         JSON: each sample's stack (leaf first), values,
#                                 labels
# Used as a module by tests/data/pyroscope-mock.py.  Exit 1 on a bad profile.
import gzip
import json
import sys


class Bad(Exception):
    pass


def varint(b, i):
    v, shift = 0, 0
    while True:
        if i >= len(b):
            raise Bad("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise Bad("varint too long")


def fields(b):
    """(field, wire type, value) of a message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if f == 0:
            raise Bad("field 0")
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Bad("length past the end")
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif w == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise Bad("wire type %d" % w)
        if i > len(b):
            raise Bad("truncated")
        yield f, w, v


def ints(w, v):
    """A repeated integer field, packed or not."""
    if w == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def msg(b, spec):
    """Decode b with spec: field -> (name, kind), kind 'int', 'ints', 'bytes', 'msgs'."""
    d = {name: ([] if kind in ("ints", "msgs") else 0) for name, kind in spec.values()}
    for f, w, v in fields(b):
        if f not in spec:
            continue
        name, kind = spec[f]
        if kind == "int":
            if w != 0:
                raise Bad("field %s is not a varint" % name)
            d[name] = v
        elif kind == "ints":
            d[name].extend(ints(w, v))
        elif kind == "msgs":
            if w != 2:
                raise Bad("field %s is not a message" % name)
            d[name].append(v)
    return d


VT = {1: ("type", "int"), 2: ("unit", "int")}
PROFILE = {1: ("sample_type", "msgs"), 2: ("sample", "msgs"), 3: ("mapping", "msgs"),
           4: ("location", "msgs"), 5: ("function", "msgs"), 6: ("string_table", "msgs"),
           9: ("time_nanos", "int"), 10: ("duration_nanos", "int"), 11: ("period_type", "msgs"),
           12: ("period", "int"), 13: ("comment", "ints"), 14: ("default_sample_type", "int")}
SAMPLE = {1: ("location_id", "ints"), 2: ("value", "ints"), 3: ("label", "msgs")}
LABEL = {1: ("key", "int"), 2: ("str", "int"), 3: ("num", "int"), 4: ("num_unit", "int")}
MAPPING = {1: ("id", "int"), 2: ("memory_start", "int"), 3: ("memory_limit", "int"),
           4: ("file_offset", "int"), 5: ("filename", "int"), 6: ("build_id", "int"),
           7: ("has_functions", "int")}
LOCATION = {1: ("id", "int"), 2: ("mapping_id", "int"), 3: ("address", "int"),
            4: ("line", "msgs")}
LINE = {1: ("function_id", "int"), 2: ("line", "int")}
FUNCTION = {1: ("id", "int"), 2: ("name", "int"), 3: ("system_name", "int"),
            4: ("filename", "int")}


def load(data):
    """The profile in data (gzipped or not) as plain Python values; raises Bad."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = msg(data, PROFILE)
    st = [s.decode("utf-8") for s in p["string_table"]]
    if not st or st[0] != "":
        raise Bad("string_table[0] is not empty")

    def s(i):
        if not 0 <= i < len(st):
            raise Bad("string index %d out of range" % i)
        return st[i]

    types = [msg(t, VT) for t in p["sample_type"]]
    out = {"sample_types": [(s(t["type"]), s(t["unit"])) for t in types],
           "time_nanos": p["time_nanos"], "duration_nanos": p["duration_nanos"],
           "comments": [s(c) for c in p["comment"]],
           "default_sample_type": s(p["default_sample_type"])}
    funcs = {}
    for b in p["function"]:
        f = msg(b, FUNCTION)
        if not f["id"] or f["id"] in funcs:
            raise Bad("function id %d" % f["id"])
        funcs[f["id"]] = {"name": s(f["name"]), "system_name": s(f["system_name"]),
                          "file": s(f["filename"])}
    maps = {}
    for b in p["mapping"]:
        m = msg(b, MAPPING)
        if not m["id"] or m["id"] in maps:
            raise Bad("mapping id %d" % m["id"])
        maps[m["id"]] = {"start": m["memory_start"], "limit": m["memory_limit"],
                         "offset": m["file_offset"], "file": s(m["filename"]),
                         "build_id": s(m["build_id"]), "has_functions": bool(m["has_functions"])}
    locs = {}
    for b in p["location"]:
        loc = msg(b, LOCATION)
        if not loc["id"] or loc["id"] in locs:
            raise Bad("location id %d" % loc["id"])
        if loc["mapping_id"] and loc["mapping_id"] not in maps:
            raise Bad("location %d: no mapping %d" % (loc["id"], loc["mapping_id"]))
        lines = []
        for lb in loc["line"]:
            ln = msg(lb, LINE)
            if ln["function_id"] not in funcs:
                raise Bad("location %d: no function %d" % (loc["id"], ln["function_id"]))
            f = funcs[ln["function_id"]]
            lines.append({"function": f["name"], "system_name": f["system_name"],
                          "file": f["file"], "line": signed(ln["line"])})
        m = maps.get(loc["mapping_id"])
        if m and not m["start"] <= loc["address"] < m["limit"]:
            raise Bad("location %d: address outside its mapping" % loc["id"])
        locs[loc["id"]] = {"address": loc["address"], "mapping": loc["mapping_id"],
                           "lines": lines}
    samples = []
    for b in p["sample"]:
        sm = msg(b, SAMPLE)
        if len(sm["value"]) != len(types):
            raise Bad("a sample with %d values for %d types" % (len(sm["value"]), len(types)))
        for i in sm["location_id"]:
            if i not in locs:
                raise Bad("a sample names location %d, which does not exist" % i)
        labels = {}
        for lb in sm["label"]:
            la = msg(lb, LABEL)
            labels[s(la["key"])] = s(la["str"]) if la["str"] else signed(la["num"])
        samples.append({"locations": sm["location_id"],
                        "values": [signed(v) for v in sm["value"]], "labels": labels})
    out.update(functions=funcs, mappings=maps, locations=locs, samples=samples)
    return out


def stack(prof, sample):
    """Function names of a sample, leaf first, inlined functions before their caller."""
    return [ln["function"] for i in sample["locations"] for ln in prof["locations"][i]["lines"]]


def folded(prof, type_name, cut=None):
    k = [t for t, _ in prof["sample_types"]].index(type_name)
    tot = {}
    for sm in prof["samples"]:
        v = sm["values"][k]
        if v:
            names = [n.encode()[:cut].decode(errors="ignore") if cut else n
                     for n in stack(prof, sm)]
            key = ";".join(reversed(names))
            tot[key] = tot.get(key, 0) + v
    return ["%s %d" % (key, tot[key]) for key in sorted(tot, key=lambda x: x.encode())]


def count(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return sum(1 for f, _, _ in fields(data) if f == 2)


def main():
    try:
        if sys.argv[1] == "count":
            print(count(open(sys.argv[2], "rb").read()))
            sys.exit(0)
        prof = load(open(sys.argv[2], "rb").read())
    except (Bad, OSError, UnicodeDecodeError, EOFError) as e:
        print("pprof.py: %s: %s" % (sys.argv[2], e), file=sys.stderr)
        sys.exit(1)
    if sys.argv[1] == "folded":
        cut = int(sys.argv[4]) if len(sys.argv) > 4 else None
        for line in folded(prof, sys.argv[3], cut):
            print(line)
    elif sys.argv[1] == "samples":
        json.dump([{"stack": stack(prof, sm), "values": sm["values"], "labels": sm["labels"]}
                   for sm in prof["samples"]], sys.stdout)
    else:
        json.dump({"sample_types": prof["sample_types"], "samples": len(prof["samples"]),
                   "locations": len(prof["locations"]), "functions": len(prof["functions"]),
                   "mappings": list(prof["mappings"].values()),
                   "time_nanos": prof["time_nanos"], "duration_nanos": prof["duration_nanos"],
                   "default_sample_type": prof["default_sample_type"],
                   "comments": prof["comments"]}, sys.stdout)
    sys.exit(0)


if __name__ == "__main__":
    main()
