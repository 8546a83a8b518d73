#!/bin/bash
# live/sample_work: a sample taken while a kworker executes a work item is
# the work item's (samples.node), not merely the kworker's. The workload
# (tests/workloads/ptyflood.c) floods a pty, so kworkers spend much time in
# the flush_to_ldisc work items its writes queue; they belong to the traced
# process, so their samples are recorded although the kworker is not in
# the traced set:
#  - at least 20 kworker CPU samples have flush_to_ldisc in their kernel
#    stack, and at least 90% of them have as node a work item named
#    flush_to_ldisc that was executed on that kworker before the sample;
#  - at least 95% of all samples whose node is a work item are inside the
#    kworker's process_one_work() (the rest of the window between the
#    execute start and end tracepoints is the tracepoints' own cost); how
#    many are in the work item's function itself is reported.

. "$(dirname "$0")/../lib/live.bash" "$@"

capture -q -F 4999 --no-offcpu -o "$T/t.cwt" -- "$WL/ptyflood" "$T/truth" 1.5
need_class workqueue "$T/t.cwt"
DB=$T/t.db
analyze "$T/t.cwt" "$DB"

IN_FLUSH="exists (select 1 from stack_frames sf join frames f on f.id = sf.frame
	where sf.stack = s.stack and f.kernel = 1 and f.function = 'flush_to_ldisc')"
read -r n ok < <(q "select count(*), sum(w.id is not null) from samples s
	join nodes t on t.id = s.thread
	left join nodes w on w.id = s.node and w.type = 'work_item' and w.name = 'flush_to_ldisc'
	    and exists (select 1 from edges e where e.src = w.id and e.dst = s.thread
	                and e.type = 'execute' and e.ts <= s.ts)
	where s.kind = 'cpu' and t.name like 'kworker%' and $IN_FLUSH" | tr '|' ' ')
[ "$n" -ge 20 ] || fail "$n kworker samples inside flush_to_ldisc"
[ $((ok * 100)) -ge $((n * 90)) ] || fail "$ok of $n kworker samples inside flush_to_ldisc have its work item as node:
  $(q "select n.type || ' ' || coalesce(n.name, '') || ' ' || count(*) from samples s join nodes t on t.id = s.thread
	join nodes n on n.id = s.node where s.kind = 'cpu' and t.name like 'kworker%' and $IN_FLUSH group by n.type, n.name" | tr '\n' ';')"
IN_FN="exists (select 1 from stack_frames sf join frames f on f.id = sf.frame
	where sf.stack = s.stack and f.kernel = 1 and f.function = "
read -r wn wpow wfn < <(q "select count(*), sum($IN_FN 'process_one_work')), sum($IN_FN w.name))
	from samples s join nodes w on w.id = s.node and w.type = 'work_item'" | tr '|' ' ')
[ $((wpow * 100)) -ge $((wn * 95)) ] || fail "$wpow of $wn work item samples inside process_one_work"
echo "live/$NAME: $ok/$n kworker samples in flush_to_ldisc are its work item's; of $wn work item samples," \
	"$wpow in process_one_work, $wfn in the work item's function"
