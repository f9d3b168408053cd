#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report --html on reportprog's trace: one page with no URL
# in it, whose embedded JSON holds the known peak, counts and a bounded time
# series; then the page rendered headless by Debian's chromium (make check
# installs it): its script ran without error (#rip-ok, no #rip-error), drew both
# line charts, the bars and the flame graph frames, the top-sites table, and
# a screenshot was taken.  --html=- prints the page on standard output.
# Usage errors of --html.
. tests/data/common.sh
prog=$BUILD/tests/integ/reportprog
need_bin "$prog" "$RIP"
need_cmd python3
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is not installed: make check installs it"

ring=$("$prog" known) || die "reportprog known failed"
[ -s "$ring" ] || die "reportprog made no ring file ($ring)"
page=$TEST_TMP/report.html

expect_status 0 "rip report --html" "$RIP" report --html "$page" "$ring"
[ -s "$page" ] || die "no page written"
[ -s "$TEST_TMP/out" ] && fail "--html printed on stdout"
# --html=- is standard output (it made a file named "-")
expect_status 0 "rip report --html=-" sh -c 'cd "$1" && shift && exec "$@"' sh "$TEST_TMP" \
	"$RIP" report --html=- "$ring"
[ -e "$TEST_TMP/-" ] && fail "--html=- made a file named -"
cmp -s "$TEST_TMP/out" "$page" || fail "--html=- does not print the page on stdout"

# self-contained: no URL, no external script, style or image
grep -nE 'https?:|//cdn|(src|href)="[a-z]*:?//|<link|@import|url\(' "$page" &&
	fail "the page refers to something outside itself"

python3 - "$page" <<'PYEOF' || fail "embedded JSON differs"
import json, re, sys
s = open(sys.argv[1]).read()
m = re.findall(r'<script type="application/json" id="rip-data">(.*?)</script>', s, re.S)
assert len(m) == 1, "one JSON object"
d = json.loads(m[0])
r = d["report"]
mem = r["memory"]
assert (mem["peak"]["bytes"], mem["peak"]["blocks"]) == (1400000, 5), mem["peak"]
assert (mem["allocations"], mem["frees"], mem["live_blocks"], mem["live_bytes"]) == \
    (22, 18, 4, 1005000), mem
S = d["series"]
pts = S["points"]
assert 0 < len(pts) <= 1000 and S["bucket_ns"] > 0, (len(pts), S["bucket_ns"])
assert max(p[2] for p in pts) == 1400000, "series peak"
assert sum(p[4] for p in pts) == 22 and sum(p[6] for p in pts) == 18, "series counts"
assert pts[-1][3] == 1005000 or [p for p in pts if p[0]][-1][3] == 1005000, "series end"
sz = [(b["min"], b["count"], b["live_count"], b["live_bytes"]) for b in d["sizes"]]
assert sz == [(16, 10, 0, 0), (64, 1, 0, 0), (512, 5, 2, 2000), (2048, 1, 1, 3000),
              (65536, 4, 0, 0), (524288, 1, 1, 1000000)], sz
fl = d["flame"]
assert len(fl["sites"]) == 5 and fl["other"]["sites"] == 0, fl["other"]
assert sum(x["b"] for x in fl["sites"]) == 1408260
big = fl["sites"][0]
assert big["f"][0][0] == "rs_big" and "reportprog.c:" in big["f"][0][1], big
assert big["f"][1][0] == "rs_main", big
PYEOF

# usage
expect_status 2 "--html without a file" "$RIP" report "$ring" --html
expect_status 2 "--html and --json" "$RIP" report --json --html "$page" "$ring"
expect_status 1 "--html into no directory" "$RIP" report --html "$TEST_TMP/no/such/x.html" "$ring"

# the page in a browser
prof=$(mktemp -d "$TEST_TMP/chromium.XXXXXX")
set -- --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$prof"
timeout 120 /usr/bin/chromium "$@" --dump-dom "file://$page" >"$TEST_TMP/dom.html" \
	2>"$TEST_TMP/chromium.err" ||
	fail "chromium --dump-dom failed: $(tail -n 3 "$TEST_TMP/chromium.err")"
timeout 120 /usr/bin/chromium "$@" --window-size=1200,1800 \
	--screenshot="$TEST_TMP/report.png" "file://$page" >/dev/null 2>&1 ||
	fail "chromium --screenshot failed"
[ -s "$TEST_TMP/report.png" ] || fail "no screenshot"
python3 - "$TEST_TMP/dom.html" <<'PYEOF' || fail "the rendered page differs"
import re, sys
s = open(sys.argv[1]).read()
err = re.search(r'<pre id="rip-error"[^>]*>(.*?)</pre>', s, re.S)
assert not err, "script error: " + err.group(1)
ok = re.search(r'<div id="rip-ok" data-frames="(\d+)" data-charts="(\d+)" data-rows="(\d+)"', s)
assert ok, "no success marker: the script did not finish"
frames, charts, rows = map(int, ok.groups())
fg = len(re.findall(r'<div class="fg"', s))
# all, rs_main, rs_big, rs_temp at least (rs_small is below a pixel)
assert frames == fg and fg >= 4, (frames, fg)
assert re.search(r'<div class="fg"[^>]*title="rs_big \([^"]*reportprog\.c:\d+\): 1\.0 MB', s), \
    "flame frame with function and bytes"
assert charts == 6, charts
for cls in ("line", "rate"):
    d = re.search(r'<path class="%s" d="([^"]*)"' % cls, s)
    assert d and d.group(1).count("L") >= 10, (cls, d and d.group(1)[:80])
assert len(re.findall(r'<rect class="(freed|live)"', s)) >= 2 * (6 + 10), "bars"
sites = re.findall(r'<td class="site">rs_\w+ \([^<]*reportprog\.c:\d+\)</td>', s)
assert rows == 5 and len(sites) == 5, (rows, sites)
PYEOF

t_done
