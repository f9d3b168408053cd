#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: perl (Debian's) building a hash of 50,000 keys, sorting,
# joining, a regex pass and a file written and read back runs under rip
# run --mem --fd --shm as it runs plain: the same output and exit status,
# no hang, 0 events lost, the trace read by rip leaks and rip report; and a
# perl that forks two children and execs a third program, under
# --follow-fork --follow-exec, the same with every child's trace.
# Timeout: 120
. tests/data/real.sh
real_need perl
cat >"$W/work.pl" <<'PL'
use strict;
use warnings;
my %h;
for my $i (1 .. 50000) {
	$h{"key$i"} = [ $i, "v" x ($i % 13) ];
	delete $h{"key" . ($i - 7)} if $i % 5 == 0;
}
my @k = sort { $h{$a}[0] <=> $h{$b}[0] } keys %h;
my $s = join(",", @k[0 .. 9]);
(my $t = $s) =~ s/key(\d+)/<$1>/g;
open(my $f, ">", $ARGV[0]) or die "open: $!";
print $f "$_ $h{$_}[0]\n" for @k;
close($f);
open($f, "<", $ARGV[0]) or die "open: $!";
my $n = 0;
$n++ while <$f>;
close($f);
print scalar(@k), " $n $t\n";
PL
real_run "perl hash, sort, regex, file" "$REAL_OPTS" "rm -f \"\$W/out.txt\"" perl "$W/work.pl" "$W/out.txt"
grep -q '^40001 40001 <1>,<2>,<4>,' "$TEST_TMP/plain.out" || fail "perl: unexpected output: $(cat "$TEST_TMP/plain.out")"

cat >"$W/fork.pl" <<'PL'
use strict;
use warnings;
$| = 1;
my @pids;
for my $k (1 .. 2) {
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		my @a = map { "x" x ($_ % 50) } 1 .. 20000;
		exit(10 + $k + (scalar(@a) == 20000 ? 0 : 50));
	}
	push @pids, $pid;
}
my @st;
for my $pid (@pids) {
	waitpid($pid, 0);
	push @st, $? >> 8;
}
my $out = `echo child-exec`;
chomp $out;
print "@st $out\n";
exit 3;
PL
real_run "perl fork + exec" "$REAL_FOLLOW" : perl "$W/fork.pl"
grep -qx '11 12 child-exec' "$TEST_TMP/plain.out" || fail "perl fork: unexpected output: $(cat "$TEST_TMP/plain.out")"
[ "$real_prc" = 3 ] || fail "perl fork: exit $real_prc, want 3"
# two forked children, the shell of the backticks and its echo (or echo directly)
[ "$real_traces" -ge 4 ] || fail "perl fork: $real_traces traces, want the parent's and at least 3 children's"
t_done
