#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip push --pyroscope=URL against tests/data/pyroscope-mock.py,
# a local stand-in for Pyroscope's ingest API that records each request and
# what is wrong with its shape.  A heap trace (pprofprog heap): one POST to
# PREFIX/ingest with name=APP{labels}, from and until the seconds that
# cover the trace's events, format=pprof, a multipart/form-data body whose
# "profile" part is the gzipped profile rip export --format=pprof writes,
# byte for byte, with the four heap sample types, and whose
# "sample_type_config" part configures those types; --leaks sends only the
# inuse types; the threads of a ring file go as a threads profile; the
# application name defaults to the traced command.  Clear errors, exit 1: a
# refused connection, a 400 answer (its body shown), a server that closes
# without answering, an unknown host; exit 2: https://, other schemes, no
# host, bad ports, bad labels, no --pyroscope.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/tests/integ/pprofprog" "$BUILD/tests/integ/exportprog"
need_cmd python3

# mock NAME ARGS...: start a mock server; its port in $port
mock() {
	m=$1
	shift
	rm -f "$TEST_TMP/$m.port"
	t_bg python3 tests/data/pyroscope-mock.py "$TEST_TMP/$m.port" "$TEST_TMP/$m.rec" "$@"
	mock_pid=$T_LAST
	wait_file "$TEST_TMP/$m.port" 20 || die "the mock server $m did not start"
	port=$(cat "$TEST_TMP/$m.port")
}

"$RIP" run -o "$TEST_TMP/heap" -- "$BUILD/tests/integ/pprofprog" heap 1000 >/dev/null 2>&1 ||
	die "rip run pprofprog heap 1000"
expect_status 0 "export" "$RIP" export --format=pprof "$TEST_TMP/heap" -o "$TEST_TMP/heap.pb.gz"
expect_status 0 "export --leaks" "$RIP" export --format=pprof --leaks "$TEST_TMP/heap" \
	-o "$TEST_TMP/leaks.pb.gz"
ring=$("$BUILD/tests/integ/exportprog" exit) || die "exportprog exit failed"

# ---- what a good push sends ----
mock ok
expect_status 0 "push" "$RIP" push --pyroscope="http://127.0.0.1:$port/base/" --app=shop.api \
	-l env=test -l region=eu-1 "$TEST_TMP/heap"
grep -q "^rip push: heap profile of 1000 samples .* sent to http://127.0.0.1:$port/base/ as shop.api: 200\$" \
	"$TEST_TMP/err" || fail "push: no summary line: $(cat "$TEST_TMP/err")"
expect_status 0 "push --leaks" "$RIP" push --pyroscope="http://localhost:$port" --leaks \
	--tenant=team-a "$TEST_TMP/heap"
expect_status 0 "push a ring" "$RIP" push -p "http://127.0.0.1:$port" --profile=threads "$ring"
t_kill "$mock_pid"
python3 - "$TEST_TMP" "$port" <<'EOF' || fail "the requests are not what Pyroscope takes"
import json, sys, time
tmp, port = sys.argv[1], sys.argv[2]
sys.path.insert(0, "tests/data")
import pprof
recs = [json.loads(l) for l in open(tmp + "/ok.rec")]
bad = 0
def no(*msg):
    global bad
    bad += 1
    print("FAIL:", *msg, file=sys.stderr)
if len(recs) != 3:
    no(len(recs), "requests recorded, want 3")
    sys.exit(1)
for i, r in enumerate(recs, 1):
    if r["problems"]:
        no("request", i, r["problems"])
    if r["method"] != "POST" or r["version"] != "HTTP/1.1":
        no("request", i, r["method"], r["version"])
    if [p["name"] for p in r["parts"]] != ["profile", "sample_type_config"]:
        no("request", i, "parts", r["parts"])
    q = r["query"]
    if q.get("format") != ["pprof"] or q.get("spyName") != ["rip"]:
        no("request", i, "query", q)
    t0 = r["profile"]["time_nanos"]
    t1 = t0 + r["profile"]["duration_nanos"]
    f, u = int(q["from"][0]), int(q["until"][0])
    if not (f == t0 // 10**9 and u == max(-(-t1 // 10**9), f + 1)):
        no("request", i, "from", f, "until", u, "for a profile of", t0, "..", t1)
    if abs(f - time.time()) > 600:
        no("request", i, "from is not now:", f)
    types = [t for t, _ in r["profile"]["sample_types"]]
    if sorted(r["sample_type_config"]) != sorted(types):
        no("request", i, "sample_type_config", r["sample_type_config"], "for", types)
heap, leaks, ring = recs
if heap["path"] != "/base/ingest" or heap["query"]["name"] != ["shop.api{env=test,region=eu-1}"]:
    no("heap: path, name", heap["path"], heap["query"]["name"])
if heap["headers"].get("host") != "127.0.0.1:" + port:
    no("heap: Host", heap["headers"].get("host"))
if [t for t, _ in heap["profile"]["sample_types"]] != ["alloc_objects", "alloc_space",
                                                       "inuse_objects", "inuse_space"]:
    no("heap: sample types", heap["profile"]["sample_types"])
if heap["profile"]["samples"] != 1000:
    no("heap: samples", heap["profile"]["samples"])
if open(tmp + "/ok.rec.1.pb.gz", "rb").read() != open(tmp + "/heap.pb.gz", "rb").read():
    no("heap: the profile sent is not the one rip export --format=pprof writes")
if open(tmp + "/ok.rec.2.pb.gz", "rb").read() != open(tmp + "/leaks.pb.gz", "rb").read():
    no("leaks: the profile sent is not the one rip export --format=pprof --leaks writes")
if [t for t, _ in leaks["profile"]["sample_types"]] != ["inuse_objects", "inuse_space"]:
    no("leaks: sample types", leaks["profile"]["sample_types"])
if leaks["path"] != "/ingest" or leaks["query"]["name"] != ["pprofprog"]:
    no("leaks: path, name (the command by default)", leaks["path"], leaks["query"]["name"])
if leaks["headers"].get("x-scope-orgid") != "team-a":
    no("leaks: X-Scope-OrgID", leaks["headers"].get("x-scope-orgid"))
if ring["profile"]["sample_types"] != [["threads", "count"]] or not ring["profile"]["samples"]:
    no("ring: a threads profile", ring["profile"])
if ring["query"]["name"] != ["exportprog"]:
    no("ring: name", ring["query"]["name"])
sys.exit(1 if bad else 0)
EOF

# ---- errors ----
# refused: the port of the mock that was just stopped
expect_status 1 "refused" "$RIP" push --pyroscope="http://127.0.0.1:$port" "$TEST_TMP/heap"
grep -q "cannot connect to 127.0.0.1:$port: Connection refused" "$TEST_TMP/err" ||
	fail "refused: $(cat "$TEST_TMP/err")"
mock bad --status=400 "--body=bad profile: no samples"
expect_status 1 "a 400" "$RIP" push --pyroscope="http://127.0.0.1:$port" "$TEST_TMP/heap"
grep -q "the server answered 400 Bad Request: bad profile: no samples" "$TEST_TMP/err" ||
	fail "400: $(cat "$TEST_TMP/err")"
t_kill "$mock_pid"
mock mute --status=0
expect_status 1 "no answer" "$RIP" push --pyroscope="http://127.0.0.1:$port" "$TEST_TMP/heap"
grep -q "the connection was closed without an answer" "$TEST_TMP/err" ||
	fail "closed: $(cat "$TEST_TMP/err")"
t_kill "$mock_pid"
expect_status 1 "unknown host" "$RIP" push --pyroscope="http://no-such-host.invalid:4040" \
	"$TEST_TMP/heap"
grep -q "cannot resolve no-such-host.invalid" "$TEST_TMP/err" || fail "host: $(cat "$TEST_TMP/err")"
expect_status 1 "no trace" "$RIP" push --pyroscope="http://127.0.0.1:4040" "$TEST_TMP/none"

for u in "https://127.0.0.1:4040" "ftp://127.0.0.1" "http://" "http://:4040" \
	"http://127.0.0.1:0" "http://127.0.0.1:65536" "http://127.0.0.1:40x" "http://u@h" \
	"http://[::1" "http://h/?q=1"; do
	expect_status 2 "URL $u" "$RIP" push --pyroscope="$u" "$TEST_TMP/heap"
done
expect_status 2 "https" "$RIP" push --pyroscope=https://example.org "$TEST_TMP/heap"
grep -q "https is not supported" "$TEST_TMP/err" || fail "https: $(cat "$TEST_TMP/err")"
expect_status 2 "no URL" "$RIP" push "$TEST_TMP/heap"
expect_status 2 "a bad label" "$RIP" push -p http://h -l "a b=c" "$TEST_TMP/heap"
expect_status 2 "a label value with a brace" "$RIP" push -p http://h -l "a=}" "$TEST_TMP/heap"
expect_status 2 "a bad app" "$RIP" push -p http://h --app="x{y}" "$TEST_TMP/heap"
expect_status 0 "--help" "$RIP" push --help
grep -q -- "--pyroscope=URL" "$TEST_TMP/out" || fail "--help says nothing of --pyroscope"
rm -f "$ring"
t_done
