#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a JVM (Debian's default-jdk-headless) running a fixed thread
# pool of 4 workers over 32 tasks that build strings and maps, compiled
# with javac here, runs under rip run --mem --fd --shm as it runs plain:
# the same output and exit status, no hang, 0 events lost, every trace read
# by rip leaks and rip report.  The JVM's GC and compiler threads take the
# paths that once deadlocked (pthread_getattr_np from inside the JVM).
# Timeout: 150
. tests/data/real.sh
real_need java javac
cat >"$W/Pool.java" <<'JAVA'
import java.util.*;
import java.util.concurrent.*;

public class Pool {
	public static void main(String[] args) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(4);
		List<Future<Long>> fs = new ArrayList<>();
		for (int t = 0; t < 32; t++) {
			final int k = t;
			fs.add(pool.submit(() -> {
				Map<Integer, String> m = new HashMap<>();
				long sum = 0;
				for (int i = 0; i < 20000; i++) {
					m.put(i, Integer.toString(i * k));
					if (i % 3 == 0)
						m.remove(i / 2);
				}
				for (String v : m.values())
					sum += v.length();
				return sum;
			}));
		}
		long total = 0;
		for (Future<Long> f : fs)
			total += f.get();
		pool.shutdown();
		if (!pool.awaitTermination(30, TimeUnit.SECONDS))
			System.exit(3);
		System.out.println("tasks 32 total " + total);
	}
}
JAVA
timeout 100 javac -d "$W" "$W/Pool.java" || die "javac failed"
# the JVM prints nothing on stderr here; -Xshare is left as the default
real_run "java thread pool" "$REAL_OPTS" : java -cp "$W" Pool
grep -q '^tasks 32 total [0-9][0-9]*$' "$TEST_TMP/plain.out" ||
	fail "java: unexpected output: $(head -n 3 "$TEST_TMP/plain.out")"
# the pool's threads wrote events of their own: more than one stream with mem events
k=$("$RIP" report --json "$real_trace" | grep -o '"tid":' | wc -l)
[ "$k" -ge 5 ] || fail "java: $k threads with allocations in the report, want the pool's 4 and main"
t_done
