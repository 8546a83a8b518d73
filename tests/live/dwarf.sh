#!/bin/bash
# live/dwarf: --call-graph dwarf unwinds programs without frame pointers
# through distro libraries. tests/workloads/nofp.c is built with
# -fomit-frame-pointer and spends its time in a qsort() comparator that
# libc calls (Debian's libc has no frame pointers either):
#  - at least 80% of the CPU samples whose leaf is cmp_slow() unwind
#    through a libc frame up to sort_rounds() and main(), in that order;
#  - the same program under --call-graph fp is reported for comparison.

. "$(dirname "$0")/../lib/live.bash" "$@"

reach() { # how many cmp_slow samples reach sort_rounds and main through libc
	q "with c as (
	     select s.id, s.stack from samples s where s.thread = $1 and s.kind = 'cpu'
	        and (select f.function from stack_frames sf join frames f on f.id = sf.frame
	             where sf.stack = s.stack and f.kernel = 0 order by sf.position limit 1) = 'cmp_slow'),
	   pos as (
	     select c.id, min(case when f.module like '%/libc.so%' then sf.position end) libc,
	            min(case when f.function = 'sort_rounds' then sf.position end) sorter,
	            min(case when f.function = 'main' then sf.position end) main_pos
	       from c join stack_frames sf on sf.stack = c.stack join frames f on f.id = sf.frame group by c.id)
	   select (select count(*) from c), count(*) from pos where libc < sorter and sorter < main_pos"
}

capture -q -F 999 --no-offcpu --call-graph dwarf -o "$T/d.cwt" -- "$WL/nofp" "$T/truth" 1.5
DB=$T/d.db
analyze "$T/d.cwt" "$DB"
S=$(thread_node sorter "$T/truth") || exit 1
read -r n ok < <(reach "$S" | tr '|' ' ')
[ "$n" -ge 300 ] || fail "$n CPU samples with cmp_slow as leaf for 1.5 s of sorting"
[ $((ok * 100)) -ge $((n * 80)) ] || fail "$ok of $n cmp_slow samples unwind through libc to sort_rounds and main:
  $(q "select group_concat(coalesce(f.function, printf('%#x', f.address)) || '@' || coalesce(replace(f.module, rtrim(f.module, replace(f.module, '/', '')), ''), '?'), ' < ')
	from (select s.stack from samples s where s.thread = $S and s.kind = 'cpu'
	      and (select f.function from stack_frames sf join frames f on f.id = sf.frame
	           where sf.stack = s.stack and f.kernel = 0 order by sf.position limit 1) = 'cmp_slow' limit 1) x
	join stack_frames sf on sf.stack = x.stack join frames f on f.id = sf.frame")"

capture -q -F 999 --no-offcpu --call-graph fp -o "$T/f.cwt" -- "$WL/nofp" "$T/ftruth" 1
DB=$T/f.db
analyze "$T/f.cwt" "$DB"
S=$(thread_node sorter "$T/ftruth") || exit 1
read -r fn fok < <(reach "$S" | tr '|' ' ')
echo "live/$NAME: dwarf: $ok/$n comparator samples unwind through libc to main; frame pointers: $fok/$fn"
