#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: node (Debian's nodejs) with 4 worker_threads that fill and
# trim Maps and post their results to the main thread runs under rip run
# --mem --fd --shm as it runs plain: the same output and exit status, no
# hang, 0 events lost, every trace read by rip leaks and rip report.  V8
# maps, trims and unmaps its heap pages itself (partial munmap) and each
# worker is a thread with an isolate of its own.
# Timeout: 150
. tests/data/real.sh
real_need node
cat >"$W/workers.js" <<'JS'
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (isMainThread) {
  const ps = [];
  for (let k = 0; k < 4; k++)
    ps.push(new Promise((resolve, reject) => {
      const w = new Worker(__filename, { workerData: k });
      w.on('message', resolve);
      w.on('error', reject);
    }));
  Promise.all(ps).then(r => console.log(JSON.stringify(r)));
} else {
  const m = new Map();
  let s = 0;
  for (let i = 0; i < 40000; i++) {
    m.set('k' + i, [i, workerData, 'v'.repeat(i % 17)]);
    if (i % 2) m.delete('k' + (i - 1));
  }
  for (const v of m.values()) s += v[0] + v[2].length;
  parentPort.postMessage([workerData, m.size, s]);
}
JS
real_run "node worker_threads" "$REAL_OPTS" : node "$W/workers.js"
grep -q '^\[\[0,20000,' "$TEST_TMP/plain.out" ||
	fail "node: unexpected output: $(cat "$TEST_TMP/plain.out")"
t_done
