#!/bin/bash
# tests/db_same.sh A.db B.db: do two databases say the same thing?
# Reads every table and view of the contract (docs/model.md §4) through
# its documented columns, and every view of schema/tables.sql, in a fixed
# order, each value quoted (quote(): types told apart, reals to the last
# bit), and compares the two readings table by table. For a change of how
# the database stores what it says: the reading must not move. Prints one
# line per table (rows, and "same" or "DIFFERS"); exit 1 on a difference.
# KEEP=DIR keeps the readings there.
set -u
[ $# -eq 2 ] || { echo "usage: $0 A.db B.db" >&2; exit 2; }
a=$1 b=$2
dir=${KEEP:-$(mktemp -d)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir"

# name|columns|order: the contract's columns, and those of the views.
readings='
nodes|id,type,scope,key,generation,pid,tid,name,start_ns,end_ns,start_seen,traced|id
edges|id,type,src,dst,ts,cpu,source,confidence,reason,interrupted_tid,addr|id
samples|id,node,thread,ts,cpu,kind,stack,weight,inclusion_probability,weight_exact,wake,stack_probability|id
attribution|sample,request,task,confidence,reason,waker_request|sample
stacks|id,depth|id
stack_frames|stack,position,frame|stack,position
frames|id,address,kernel,module,build_id,function,file,line,inlined|id
coverage_breaks|id,start_ns,end_ns,cpu,stream,lost_events,reason,class|id
execs|id,node,ts,comm,filename|id
diagnostics|id,level,message|id
resource_waits|id,resource,waiter,start_ns,end_ns,wake_edge,waker,confidence,reason|id
edge_types|type,carries|type
critical_path|request,seq,node,kind,start_ns,end_ns,edge,confidence,reason|request,seq
block_requests|node,dev,op,flags,sector,bytes,issue_ns|node
meta|key,value|key
resource_waits_named|*|
resource_kinds|*|
edges_named|*|
sample_frames|*|
profile_functions|*|
offcpu_by_waker|*|
sample_mechanism|*|
request_cost|*|
request_summary|*|
attribution_coverage|*|
blocked_by_cause|*|
io_request_lifetime|*|
orphans_by_class|*|
coverage_by_class|*|
causal_ancestry|*|
request_critical|*|
critical_waits|*|
'

# The SELECT of one reading: each column quoted; a view's columns from
# its first database (both must have the same).
query() { # db name cols order
	local db=$1 name=$2 cols=$3 order=$4 q=""
	if [ "$cols" = "*" ]; then
		cols=$(sqlite3 -batch "$db" "SELECT group_concat(name, ',') FROM pragma_table_info('$name')")
		order=$(seq -s, 1 "$(tr ',' '\n' <<<"$cols" | wc -l)")
	fi
	for c in ${cols//,/ }; do
		q+="${q:+, }quote($c)"
	done
	echo "SELECT $q FROM $name ORDER BY $order;"
}

status=0
while IFS='|' read -r name cols order; do
	[ -n "$name" ] || continue
	q=$(query "$a" "$name" "$cols" "$order")
	# causal_ancestry walks from every node when ancestry_root and
	# ancestry_start are empty: the chains of the last 50 nodes and of
	# the last 50 samples are enough to compare it, and all of them too
	# slow. Inside a transaction rolled back: the databases are only read.
	[ "$name" = causal_ancestry ] &&
		q="BEGIN; DELETE FROM ancestry_root; DELETE FROM ancestry_start;
			INSERT INTO ancestry_root SELECT id FROM nodes ORDER BY id DESC LIMIT 50;
			INSERT INTO ancestry_start(sample) SELECT id FROM samples ORDER BY id DESC LIMIT 50;
			$q ROLLBACK;"
	sqlite3 -batch "$a" "$q" >"$dir/$name.a" 2>&1
	sqlite3 -batch "$b" "$q" >"$dir/$name.b" 2>&1
	n=$(wc -l <"$dir/$name.a")
	if cmp -s "$dir/$name.a" "$dir/$name.b"; then
		printf '%-22s %10d rows  same\n' "$name" "$n"
	else
		printf '%-22s %10d rows  DIFFERS\n' "$name" "$n"
		diff "$dir/$name.a" "$dir/$name.b" | head -5
		status=1
	fi
done <<<"$readings"
exit $status
