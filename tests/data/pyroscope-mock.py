#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# tests/data/pyroscope-mock.py - a stand-in for Grafana Pyroscope's ingest API
# for tests/integ/push-*.sh (no Pyroscope server can be installed here).
# Listens on 127.0.0.1 (a port the kernel picks, written to PORTFILE), takes
# requests one at a time, checks each the way Pyroscope's /ingest reads a pprof
# upload, and appends what it saw to RECORD as one JSON object a line:
#
#   method, path, query (each parameter's values), headers (lower-case names),
#   parts (each multipart field: name, filename, content type, size), problems
#   (what is not the shape Pyroscope takes: empty when all is well), and of
#   the "profile" part, decoded with tests/data/pprof.py: sample types, number
#   of samples, time; the "sample_type_config" part as JSON; and the profile's
#   bytes in RECORD.N.pb.gz (N: the request's number, from 1).
#
#   pyroscope-mock.py PORTFILE RECORD [--status=CODE] [--body=TEXT]
#
# It answers CODE (default 200) with TEXT as the body, whatever it found:
# the test asserts on the record.  --status=0: it closes the connection
# without an answer.
import json
import os
import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pprof  # noqa: E402

portfile, record = sys.argv[1], sys.argv[2]
opts = dict(a[2:].split("=", 1) for a in sys.argv[3:] if a.startswith("--") and "=" in a)
status = int(opts.get("status", "200"))
answer = opts.get("body", "").encode()
count = 0


def multipart(body, boundary):
    """The parts of a multipart/form-data body: (headers dict, data)."""
    delim = b"--" + boundary
    if not body.startswith(delim):
        raise ValueError("the body does not start with the boundary")
    parts = []
    for chunk in body.split(delim)[1:]:
        if chunk.startswith(b"--"):
            break
        if not chunk.startswith(b"\r\n") or not chunk.endswith(b"\r\n"):
            raise ValueError("a part not framed by CRLF")
        head, sep, data = chunk[2:-2].partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("a part without a blank line after its headers")
        hdrs = {}
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        parts.append((hdrs, data))
    else:
        raise ValueError("no closing boundary")
    return parts


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def handle_any(self):
        global count
        count += 1
        url = urllib.parse.urlsplit(self.path)
        rec = {"method": self.command, "path": url.path, "version": self.request_version,
               "query": urllib.parse.parse_qs(url.query, keep_blank_values=True),
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "parts": [], "problems": []}
        bad = rec["problems"].append
        n = int(self.headers.get("Content-Length", "-1"))
        if n < 0:
            bad("no Content-Length")
            body = b""
        else:
            body = self.rfile.read(n)
        if self.command != "POST":
            bad("method " + self.command)
        if not url.path.endswith("/ingest"):
            bad("path " + url.path)
        q = rec["query"]
        for k in ("name", "from", "until", "format"):
            if len(q.get(k, [])) != 1:
                bad("query parameter %s: %s" % (k, q.get(k)))
        if q.get("format") != ["pprof"]:
            bad("format is not pprof")
        if not re.fullmatch(r"[^{}]+(\{[A-Za-z_][\w.]*=[^{},=]+(,[A-Za-z_][\w.]*=[^{},=]+)*\})?",
                            q.get("name", [""])[0]):
            bad("name is not APP or APP{k=v,...}: %r" % q.get("name"))
        try:
            f, u = int(q["from"][0]), int(q["until"][0])
            if not 0 < f < u:
                bad("from %d, until %d" % (f, u))
        except (KeyError, ValueError):
            bad("from, until are not numbers")
        ctype = self.headers.get("Content-Type", "")
        m = re.fullmatch(r"multipart/form-data;\s*boundary=(\S+)", ctype)
        if not m:
            bad("Content-Type " + ctype)
        else:
            try:
                for hdrs, data in multipart(body, m.group(1).encode()):
                    disp = hdrs.get("content-disposition", "")
                    name = re.search(r'\bname="([^"]*)"', disp)
                    fname = re.search(r'\bfilename="([^"]*)"', disp)
                    part = {"name": name.group(1) if name else None,
                            "filename": fname.group(1) if fname else None,
                            "content_type": hdrs.get("content-type"), "size": len(data)}
                    rec["parts"].append(part)
                    if part["name"] == "profile":
                        if data[:2] != b"\x1f\x8b":
                            bad("the profile is not gzipped")
                        try:
                            p = pprof.load(data)
                            rec["profile"] = {"sample_types": p["sample_types"],
                                              "samples": len(p["samples"]),
                                              "time_nanos": p["time_nanos"],
                                              "duration_nanos": p["duration_nanos"]}
                        except Exception as e:  # any decoding problem is the finding
                            bad("the profile does not decode: %s" % e)
                        with open("%s.%d.pb.gz" % (record, count), "wb") as out:
                            out.write(data)
                    elif part["name"] == "sample_type_config":
                        try:
                            rec["sample_type_config"] = json.loads(data)
                        except ValueError as e:
                            bad("sample_type_config is not JSON: %s" % e)
            except ValueError as e:
                bad("multipart: %s" % e)
        if [p["name"] for p in rec["parts"]][:1] != ["profile"]:
            bad("no profile part first")
        with open(record, "a") as out:
            out.write(json.dumps(rec) + "\n")
        self.close_connection = True
        if not status:
            return
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer)
        self.close_connection = True


srv = HTTPServer(("127.0.0.1", 0), Handler)
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(tmp, portfile)
srv.serve_forever()
