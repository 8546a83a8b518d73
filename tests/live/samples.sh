#!/bin/bash
# live/samples: CPU and off-CPU samples of a program with debug info
# (tests/workloads/burn.c), checked against what it knows it did.
#  - CPU: at least 80% of the spinner thread's CPU samples have burn_cpu()
#    as their innermost user function, with burn.c and a line of its body;
#    their weights add up to the thread's own CPU time within 15%.
#  - off-CPU: each of the sleeper's 200 ms naps is one off-CPU sample whose
#    stack holds nap(), weighted within 25% of 200 ms, and linked to the
#    edge that ended the wait, whose dst is the sleeper. Under
#    --call-graph dwarf: nap() calls libc's clock_nanosleep, which keeps
#    no frame pointer, so a frame-pointer walk from the syscall skips
#    nap() itself (its caller's frame is the next one on the chain).
#  - no record of either capture is read past the analyzer's reorder
#    window (the capture merges its two rings by time);
#  - budget (frame pointers, the default): with --sample-budget well
#    below the natural rate, samples are decimated (inclusion probability
#    < 1, far fewer kept), the sum of weight / inclusion_probability still
#    estimates the spinner's CPU time within 15%, and 80% of the kept
#    samples are in burn_cpu() with file and line, as above;
#  - waits under a budget (--sample-budget 1,0): every nap is still one
#    certain row with its weight and wake; only its stacks are sampled.

. "$(dirname "$0")/../lib/live.bash" "$@"

capture -q -F 999 --call-graph dwarf -o "$T/t.cwt" -- "$WL/burn" "$T/truth" 2 3
DB=$T/t.db
analyze "$T/t.cwt" "$DB"
# The capture merges the two rings by time up to a horizon (capture/
# drain.c): no record, sample or edge, is read past the reorder window.
no_late() {
	local n
	n=$(meta events_late "$DB")
	[ "$n" = 0 ] || fail "$n records read past the analyzer's reorder window ($(meta samples_late "$DB") samples)"
}
no_late
read -r _ STID CPU_NS < <(grep '^spinner ' "$T/truth") || fail "no spinner line in ground truth"
read -r _ FIRST LAST < <(grep '^burn_lines ' "$T/truth") || fail "no burn_lines in ground truth"
read -r _ _ NAPS NAP_NS < <(grep '^sleeper ' "$T/truth") || fail "no sleeper line in ground truth"
S=$(thread_node spinner "$T/truth") || exit 1
P=$(thread_node sleeper "$T/truth") || exit 1

# The innermost user frame that is a function of its own (not inlined).
LEAF="(select f.id from stack_frames sf join frames f on f.id = sf.frame
	where sf.stack = s.stack and f.kernel = 0 and f.inlined = 0
	order by sf.position limit 1)"
in_burn() { # thread node: "n ok", its CPU samples and those in burn_cpu's body
	local n ok
	n=$(q "select count(*) from samples s where s.thread = $1 and s.kind = 'cpu'")
	ok=$(q "select count(*) from samples s join frames f on f.id = $LEAF
		where s.thread = $1 and s.kind = 'cpu' and f.function = 'burn_cpu'
		  and f.file like '%/burn.c' and f.line between $FIRST and $LAST")
	[ $((ok * 100)) -ge $((n * 80)) ] || fail "$ok of $n spinner CPU samples in burn_cpu at burn.c:$FIRST-$LAST;
  innermost functions: $(q "select coalesce(f.function, '?') || '@' || coalesce(f.module, '?') || ' ' || count(*)
	from samples s left join frames f on f.id = $LEAF where s.thread = $1 and s.kind = 'cpu'
	group by f.function, f.module order by count(*) desc limit 5" | tr '\n' ';')"
	echo "$n $ok"
}
read -r n ok < <(in_burn "$S")
[ "$n" -ge 1000 ] || fail "$n CPU samples of the spinner at 999 Hz for 2 s of CPU"
w=$(q "select sum(weight) from samples where thread = $S and kind = 'cpu'")
[ $((w * 100)) -ge $((CPU_NS * 85)) ] && [ $((w * 100)) -le $((CPU_NS * 115)) ] ||
	fail "spinner CPU sample weights add up to $w ns, its CPU time is $CPU_NS ns"
echo "live/$NAME: $ok/$n spinner CPU samples in burn_cpu with file and line; weights $w ns for $CPU_NS ns of CPU"

LO=$((NAP_NS * 3 / 4)) HI=$((NAP_NS * 5 / 4))
HAS_NAP="exists (select 1 from stack_frames sf join frames f on f.id = sf.frame
	where sf.stack = s.stack and f.function = 'nap')"
naps=$(q "select count(*) from samples s where s.thread = $P and s.kind = 'offcpu' and $HAS_NAP")
[ "$naps" = "$NAPS" ] || fail "$naps off-CPU samples of the sleeper in nap() for $NAPS naps:
  $(q "select weight || ' ' || $HAS_NAP from samples s where s.thread = $P and s.kind = 'offcpu'" | tr '\n' ';')"
good=$(q "select count(*) from samples s join edges e on e.id = s.wake
	where s.thread = $P and s.kind = 'offcpu' and $HAS_NAP and s.weight between $LO and $HI
	  and e.dst = $P and e.ts between s.ts and s.ts + s.weight")
[ "$good" = "$NAPS" ] || fail "$good of $NAPS nap samples weighted within 25% of $NAP_NS ns and linked to the edge that woke the sleeper:
  $(q "select s.weight || ' wake ' || coalesce(s.wake, 'NULL') from samples s
	where s.thread = $P and s.kind = 'offcpu' and $HAS_NAP" | tr '\n' ';')"
by=$(q "select group_concat(distinct e.type || ' from ' || coalesce(n.type, 'NULL')) from samples s
	join edges e on e.id = s.wake left join nodes n on n.id = e.src
	where s.thread = $P and s.kind = 'offcpu' and $HAS_NAP")
echo "live/$NAME: $good/$NAPS naps are off-CPU samples in nap() of about $NAP_NS ns, ended by: $by"

capture -q -F 999 --no-offcpu --sample-budget 300 -o "$T/b.cwt" -- "$WL/burn" "$T/btruth" 3 0
DB=$T/b.db
analyze "$T/b.cwt" "$DB"
no_late
read -r _ STID CPU_NS < <(grep '^spinner ' "$T/btruth") || fail "no spinner line in ground truth"
S=$(thread_node spinner "$T/btruth") || exit 1
read -r kept est pmin span < <(q "select count(*), cast(sum(weight / inclusion_probability) as integer),
	min(inclusion_probability), max(ts) - min(ts) from samples where thread = $S and kind = 'cpu'" | tr '|' ' ')
read -r _ bok < <(in_burn "$S")
natural=$((CPU_NS / 1001001))
# The budget is per second of wall time: a spinner that shares its CPUs
# with other load (a busy CI machine) spins longer than its CPU time,
# and the budget allows more. At most 300/s over the sampled span, one
# window's quota more, and a quarter for chance.
allowed=$(((span / 1000000 * 300 / 1000 + 30) * 5 / 4))
[ "$kept" -ge 100 ] && [ "$kept" -le "$allowed" ] && [ "$kept" -lt "$natural" ] ||
	fail "$kept CPU samples of the spinner kept under a budget of 300/s over $((span / 1000000)) ms" \
		"(at most $allowed), for about $natural at 999 Hz"
awk -v p="$pmin" 'BEGIN { exit !(p < 1) }' || fail "no sample has an inclusion probability below 1 (min $pmin)"
[ $((est * 100)) -ge $((CPU_NS * 85)) ] && [ $((est * 100)) -le $((CPU_NS * 115)) ] ||
	fail "sum(weight / inclusion_probability) is $est ns, the spinner's CPU time $CPU_NS ns"
echo "live/$NAME: budget 300/s kept $kept of about $natural samples over $((span / 1000000)) ms (min p $pmin, $bok in burn_cpu); estimate $est ns for $CPU_NS ns of CPU"

# Waits under a budget far below their rate (1 stack a second, CPU ticks
# uncapped): every nap is still its own row, certain (inclusion
# probability 1), weighted and linked to its wake as above; only its
# stacks are sampled (stack_probability below 1), the rest stackless.
capture -q -F 99 --sample-budget 1,0 -o "$T/w.cwt" -- "$WL/burn" "$T/wtruth" 1 3
DB=$T/w.db
analyze "$T/w.cwt" "$DB"
read -r _ _ NAPS NAP_NS < <(grep '^sleeper ' "$T/wtruth") || fail "no sleeper line in ground truth"
P=$(thread_node sleeper "$T/wtruth") || exit 1
LO=$((NAP_NS * 3 / 4)) HI=$((NAP_NS * 5 / 4))
read -r rows sure good pmin bare < <(q "select count(*), sum(s.inclusion_probability = 1),
	sum(s.weight between $LO and $HI and e.dst = $P and e.ts between s.ts and s.ts + s.weight),
	min(s.stack_probability), sum(s.stack is null)
	from samples s left join edges e on e.id = s.wake where s.thread = $P and s.kind = 'offcpu'" | tr '|' ' ')
[ "$sure" = "$rows" ] || fail "$sure of the sleeper's $rows off-CPU rows have inclusion probability 1 under --sample-budget 1,0"
[ "$good" = "$NAPS" ] || fail "$good of $NAPS naps are off-CPU rows of about $NAP_NS ns linked to their wake under --sample-budget 1,0:
  $(q "select s.ts || ' ' || s.weight || ' exact ' || s.weight_exact || ' wake ' || coalesce(e.type || ' at ' || e.ts || ' into ' || e.dst, 'NULL')
	from samples s left join edges e on e.id = s.wake where s.thread = $P and s.kind = 'offcpu'" | tr '\n' ';')"
awk -v p="$pmin" 'BEGIN { exit !(p < 1) }' || fail "no wait's stack probability is below 1 under --sample-budget 1,0 (min $pmin)"
echo "live/$NAME: budget 1,0: $good/$NAPS naps kept whole among $rows waits, $bare without stacks (min stack probability $pmin)"
