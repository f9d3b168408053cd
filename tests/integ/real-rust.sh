#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a Rust program (built here with the rustc found, Debian's
# rustc package when none other is installed) whose 8 threads fill vectors
# of formatted strings, share a Mutex and send results over a channel, runs
# under rip run --mem --fd --shm as it runs plain: the same output and exit
# status, no hang (Rust's runtime calls pthread_getattr_np at start, which
# once deadlocked the preload library), 0 events lost, every trace read by
# rip leaks and rip report.
# Timeout: 150
. tests/data/real.sh
real_need rustc
cat >"$W/threads.rs" <<'RUST'
use std::collections::HashMap;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let (tx, rx) = mpsc::channel();
    let mut hs = Vec::new();
    for k in 0..8u64 {
        let total = Arc::clone(&total);
        let tx = tx.clone();
        hs.push(thread::spawn(move || {
            let mut v: Vec<String> = Vec::new();
            let mut m: HashMap<u64, Box<[u8]>> = HashMap::new();
            for i in 0..20000u64 {
                v.push(format!("{}-{}", k, i));
                if i % 3 == 0 {
                    v.pop();
                }
                m.insert(i % 500, vec![k as u8; (i % 97) as usize].into_boxed_slice());
            }
            let n: u64 = v.iter().map(|s| s.len() as u64).sum();
            *total.lock().unwrap() += n + m.len() as u64;
            tx.send((k, v.len())).unwrap();
        }));
    }
    drop(tx);
    for h in hs {
        h.join().unwrap();
    }
    let mut got: Vec<(u64, usize)> = rx.iter().collect();
    got.sort();
    println!("{:?}", got);
    println!("total {}", *total.lock().unwrap());
}
RUST
timeout 120 rustc -O -o "$W/threads" "$W/threads.rs" || die "rustc failed"
real_run "rust threads" "$REAL_OPTS" : "$W/threads"
grep -q '^total [0-9][0-9]*$' "$TEST_TMP/plain.out" ||
	fail "rust: unexpected output: $(cat "$TEST_TMP/plain.out")"
k=$("$RIP" report --json "$real_trace" | grep -o '"tid":' | wc -l)
[ "$k" -ge 9 ] || fail "rust: $k threads with allocations in the report, want 8 and main"
t_done
