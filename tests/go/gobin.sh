#!/bin/bash
# capture/gobin.c against a Go program built here (tests/go/prog.go, with
# cgo: the C of net's resolver is decoded too), through tests/tools/gobindump:
#  (a) the return instructions of runtime.newproc1 and
#      net/http.serverHandler.ServeHTTP are the rets objdump lists there,
#      as vaddrs and as file offsets (from readelf's PT_LOAD), and every
#      instruction start objdump lists in them is one of the decoder's
#      and the other way round; the same over every function of .symtab
#      (--check-all): each function the decoder walks whole has objdump's
#      starts exactly, and each one it refuses has a "(bad)" in objdump;
#  (a') the entry probes of execute, gopark, ready, goexit0 and ServeHTTP
#      sit on the JBE of their stack check, as objdump lists it, and
#      netpollready's (no stack check) on its entry;
#  (a'') where spawns are read (gobin.h, struct gobin_site): a site for
#      each call of runtime.newproc1 objdump lists, at the next call when
#      that is runtime.runqput with no jump between and its gp register
#      (DWARF's and the ABI's) last written by a move from %rax, else at
#      the return address reading %rax; at least one at runqput; file
#      offsets as readelf's;
#  (b) net/http.Request.Method and .URL and net/url.URL.Path are what the
#      program prints with unsafe.Offsetof;
#  (c) runtime.g.goid, .m, runtime.m.curg, .procid, runtime.funcval.fn,
#      runtime.pollDesc.rg and .wg are what gdb's ptype/o says;
#  (d) the wait reasons include chan receive, select, sleep and IO wait,
#      the version is `go version`'s; the argument registers the go class
#      reads are named as gobin.h says (newproc1 fn, callergp; gopark
#      reason; ServeHTTP req ...) and the DWARF location at entry and the
#      register ABI's assignment agree on each; gobin_func_name names
#      addresses inside functions and nothing outside;
#  (e) a stripped copy (-ldflags='-s -w', and strip(1)), one without
#      DWARF (-w) and a C program are refused, saying why;
#  (f) hostile copies: truncated at several lengths, random bytes over
#      .symtab and over .debug_info (compressed, and a build with
#      uncompressed DWARF), random bytes over newproc1's text: gobindump
#      never crashes (a sanitizer build: any report fails, exit 99) and
#      refuses or answers; an undefined opcode at an instruction start of
#      newproc1 makes the decoder refuse its returns; random code it walks
#      whole it walks as objdump does (where objdump finds no "(bad)"),
#      and every return it gives is a C3 or C2 byte of the copy;
#  (f') copies where the runqput call no longer provably follows
#      newproc1's return with its result (the move from %rax made one from
#      %rcx; a jump between the two calls; a jump into them from
#      runtime.main; newproc1's address as a word in .typelink): spawns
#      are read at newproc1's returns, and the warning says why; random
#      bytes over that stretch: no crash, and a call site still given is
#      a call of runqput in the copy.
# Needs go (Debian: golang-go) and gdb; without go it says so and skips
# (77). go runs offline, with HOME and its caches in the work directory.
# SEED picks the random bytes (default 1). KEEP=1 keeps the work directory.
#   tests/go/gobin.sh BUILD
set -u
BUILD=$(cd "${1:?usage: tests/go/gobin.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK_NAME=go/gobin
. "$top/tests/lib/check.bash"
[ "${KEEP:-0}" = 1 ] && trap 'echo "go/gobin: kept $T"' EXIT
cd "$T" || exit 1
D=$BUILD/gobindump
SEED=${SEED:-1}

[ -x "$D" ] || { echo "go/gobin: $D is missing (make BUILD=$BUILD)" >&2; exit 1; }
if ! command -v go >/dev/null; then
	echo "*** go/gobin: SKIPPED: go is not installed (Debian: golang-go): capture/gobin.c is NOT checked ***" >&2
	exit 77
fi
for t in objdump readelf strip gdb; do
	command -v $t >/dev/null || { echo "go/gobin: $t is missing (tests/deps.sh installs it)" >&2; exit 1; }
done
export HOME=$T/home GOPATH=$T/gopath GOCACHE=$T/gocache GOENV=off GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off
# A sanitizer's report must not pass for a refusal (exit 1).
export ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99:print_stacktrace=1
mkdir -p "$HOME" src
cp "$top/tests/go/prog.go" src/
printf 'module gobintest\n\ngo 1.19\n' > src/go.mod
build() { # OUT [go build flags]
	local out=$1
	shift
	(cd src && go build "$@" -o "$T/$out" .) 2>build.err ||
		{ echo "go/gobin: go build $* failed: $(cat build.err)" >&2; exit 1; }
}
build prog
build prog.raw -ldflags=-compressdwarf=false
build prog.s "-ldflags=-s -w"
build prog.w -ldflags=-w
strip -o prog.strip prog

# gobindump ARGS...: its output in out, 0 or 1 (refused); anything else,
# or a sanitizer's words, fails.
dump() {
	"$D" "$@" >out 2>err
	local rc=$?
	if [ $rc -gt 1 ] || grep -q 'Sanitizer\|runtime error' err; then
		fail "gobindump $* exited $rc: $(head -c 2000 err)"
		return 2
	fi
	return $rc
}
# the value after KEY in the line "TAG NAME ... KEY VALUE"
get() { # TAG NAME KEY
	awk -v t="$1" -v n="$2" -v k="$3" '$1 == t && $2 == n { for (i = 3; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' out
}

dump prog || { fail "gobindump prog refused it: $(cat out)"; exit 1; }
cp out facts
grep -q '^warning' facts && fail "warnings on the test program: $(grep '^warning' facts)"

# file offset of a vaddr, from readelf's PT_LOAD rows (hex in, hex out)
readelf -lW prog | awk '$1 == "LOAD" { print $2, $3, $5 }' > loads
fileoff() {
	local v=$(( $1 )) off vaddr filesz
	while read -r off vaddr filesz; do
		if [ $v -ge $((vaddr)) ] && [ $v -lt $((vaddr + filesz)) ]; then
			printf '0x%x\n' $((v - vaddr + off))
			return
		fi
	done < loads
	echo none
}

# (a) newproc1 and ServeHTTP: starts and returns against objdump
for fn in runtime.newproc1 net/http.serverHandler.ServeHTTP; do
	cp facts out
	addr=$(get fn $fn addr) size=$(get fn $fn size) off=$(get fn $fn off)
	[ "$(get fn $fn found)" = 1 ] || { fail "$fn not found"; continue; }
	[ "$(get ret $fn ok)" = 1 ] || fail "$fn: its returns were refused"
	[ "$off" = "$(fileoff "$addr")" ] || fail "$fn: entry file offset $off, readelf says $(fileoff "$addr")"
	objdump -d --no-show-raw-insn --start-address=$((addr)) --stop-address=$((addr + size)) prog > od.fn
	awk '/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); printf "%016s\n", a }' od.fn | tr ' ' 0 | sed 's/^/insn /' > od.starts
	awk '/^ +[0-9a-f]+:\t(rep[z]? )?retq?( |$)/ { a = $1; sub(":", "", a); printf "0x%s\n", a }' od.fn > od.rets
	dump --bounds $fn prog
	grep '^insn' out > my.starts
	grep -qx 'end ok' out || fail "$fn: --bounds: $(tail -1 out)"
	[ -s my.starts ] && cmp -s my.starts od.starts ||
		fail "$fn: instruction starts differ from objdump's: $(diff my.starts od.starts | head -5)"
	cp facts out
	awk -v n=$fn '$1 == "retoff" && $2 == n { print $5 }' out > my.rets
	[ -s od.rets ] || fail "$fn: objdump lists no ret"
	cmp -s my.rets od.rets || fail "$fn: returns $(echo $(cat my.rets)), objdump's $(echo $(cat od.rets))"
	[ "$(get ret $fn n)" = "$(wc -l < od.rets)" ] || fail "$fn: ret n $(get ret $fn n), objdump $(wc -l < od.rets)"
	# (not a pipe: fail must set failed in this shell)
	while read -r o v; do
		[ "$o" = "$(fileoff "$v")" ] || fail "$fn: return at $v has file offset $o, readelf says $(fileoff "$v")"
	done < <(awk -v n=$fn '$1 == "retoff" && $2 == n { print $3, $5 }' out)
	echo "go/gobin: $fn: $(wc -l < my.starts) instructions, returns at $(echo $(cat my.rets)), as objdump"
done

# (a') where an entry probe goes (gobin.h's probe_off): in the functions
# that open with the assembler's stack check, the JBE objdump lists right
# after its compare, at most 13 bytes in; netpollready opens with none
# (its entry then)
for fn in runtime.execute runtime.gopark runtime.ready runtime.goexit0 net/http.serverHandler.ServeHTTP \
	runtime.netpollready; do
	cp facts out
	addr=$(get fn $fn addr) probe=$(get probe $fn vaddr)
	off=$(awk -v n=$fn '$1 == "probe" && $2 == n { print $3 }' out)
	objdump -d --no-show-raw-insn --start-address=$((addr)) --stop-address=$((addr + 16)) prog |
		awk '/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); print "0x" a, $2, $3 }' > od.head
	if [ $fn = runtime.netpollready ]; then
		want=$addr
	else
		want=$(awk '$2 ~ /^cmp/ && $3 ~ /0x10\(%r14\)/ { c = 1; next } c && $2 == "jbe" { print $1; exit } { c = 0 }' od.head)
	fi
	[ -n "$want" ] && [ $((probe)) = $((want)) ] && [ $((probe - addr)) -le 13 ] ||
		fail "$fn: entry probe at $probe, expected ${want:-a JBE after the stack check}: $(tr '\n' ';' < od.head)"
	[ "$off" = "$(fileoff "$probe")" ] || fail "$fn: probe file offset $off, readelf says $(fileoff "$probe")"
done
echo "go/gobin: entry probes on the stack check's JBE (execute, gopark, ready, goexit0, ServeHTTP), netpollready's at its entry"

# (a) every function
dump --check-all prog
mv out all
objdump -d --no-show-raw-insn -j .text prog > od.all
awk '/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); printf "%016s %s\n", a, ($0 ~ /\(bad\)/) ? "bad" : "" }' od.all |
	tr ' ' 0 | sed 's/0bad$/ bad/; s/0$//' > od.lines
# objdump's starts inside the functions decoded whole, and the refused
# functions that hold a (bad); both lists are sorted by address ("x"
# keeps awk comparing strings)
awk 'FNR == NR { if ($1 == "func") { n++; lo[n] = "x" $2; hi[n] = "x" $3; ok[n] = $4 == "ok"; name[n] = $5 } next }
{ a = "x" $1; while (i < n && a >= hi[i + 1]) i++
  if (i + 1 <= n && a >= lo[i + 1]) { if (ok[i + 1]) print "insn " $1 > "od.in"; else if ($2 == "bad") print name[i + 1] > "od.bad" } }' all od.lines
touch od.in od.bad
grep '^insn' all | sort -u > my.all
sort -u od.in > od.all.starts
if ! cmp -s my.all od.all.starts; then
	fail "--check-all: instruction starts differ from objdump's: $(diff my.all od.all.starts | head -5)"
fi
awk '$1 == "func" && $4 == "refused" { print $5 }' all | sort -u > refused
sort -u od.bad > od.bad.u
comm -23 refused od.bad.u > refused.nobad
[ -s refused.nobad ] && fail "--check-all refused functions objdump decodes without (bad): $(head -5 refused.nobad)"
summary=$(grep '^functions' all)
echo "go/gobin: every function: $summary; $(wc -l < my.all) instruction starts as objdump's; refused: $(echo $(cat refused))"
[ "$(echo "$summary" | awk '{ print $4 }')" -gt 1000 ] || fail "--check-all: too few functions decoded whole: $summary"

# (a'') where spawns are read (gobin.h, struct gobin_site): one site for
# each call of runtime.newproc1 objdump lists in .text; where the next
# call after it, with no jump or return between, is runtime.runqput and
# the last write between them to runqput's gp register (its argument 1,
# DWARF's and the ABI's) is a move from %rax (newproc1's result), that
# call is the site (emulated); else the instruction the call returns to,
# reading %rax
regname() { echo "rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15" | awk -v n="$1" '{ print $(n + 1) }'; }
cp facts out
gpreg=$(awk '$1 == "arg" && $2 == "runtime.runqput" && $3 == 1 && $4 == "gp" { print $6 }' out)
[ -n "$gpreg" ] && [ "$gpreg" -ge 0 ] || fail "runtime.runqput: no register for its argument gp: $(grep '^arg runtime.runqput' out)"
gpname=$(regname "${gpreg:-0}")
# one line per call of newproc1: "RETADDR NEXTCALL TARGET LASTWRITE", NEXTCALL
# "-" when a jump, a return or the function's end comes first
awk -v r="$gpname" '
function flush(c, t) { print ret, c, t, (last == "" ? "-" : last); on = 0 }
/^[0-9a-f]+ <.*>:$/ { if (on) flush("-", "-"); next }
!/^ +[0-9a-f]+:\t/ { next }
{
	a = $1; sub(":", "", a); m = $2
	ins = $0; sub(/^ +[0-9a-f]+:\t/, "", ins); sub(/ *#.*$/, "", ins); gsub(/ +/, " ", ins)
	if (on && ret == "") ret = "0x" a
	if (on && m ~ /^call/) { flush("0x" a, $NF) }
	else if (on && (m ~ /^(j|ret|loop|int|ud2|hlt|syscall)/)) { flush("-", "-") }
	else if (on) { n = split(ins, f, ","); d = f[n]; sub(/^.* /, "", d)
		if (d ~ "^%(" r "|e" substr(r, 2) "|" substr(r, 2) "|" substr(r, 2, 1) "l)$") last = ins }
	if (m ~ /^call/ && $NF == "<runtime.newproc1>") { on = 1; ret = ""; last = "" }
}' od.all > od.spawn
[ -s od.spawn ] || fail "objdump lists no call of runtime.newproc1"
while read -r ret call target last; do
	if [ "$target" = "<runtime.runqput>" ] && [ "$last" = "mov %rax,%$gpname" ]; then
		echo "$((call)) $gpreg call"
	else
		echo "$((ret)) 0 return-site"
	fi
done < od.spawn | sort > want.spawn
awk '$1 == "spawnsite" { print $4, $6, $8 }' out | while read -r v r k; do echo "$((v)) $r $k"; done | sort > my.spawn
cmp -s want.spawn my.spawn || fail "spawn sites (vaddr reg kind) differ from objdump's calls of newproc1: $(diff my.spawn want.spawn | head -6 | tr '\n' ';')"
grep -q ' call$' my.spawn || fail "no spawn site at a call of runtime.runqput: $(cat od.spawn | tr '\n' ';')"
while read -r o v; do
	[ "$o" = "$(fileoff "$v")" ] || fail "spawn site $v has file offset $o, readelf says $(fileoff "$v")"
done < <(awk '$1 == "spawnsite" { print $2, $4 }' out)
echo "go/gobin: spawn sites as objdump's calls of newproc1: $(awk '{ printf "0x%x %s(%s) ", $1, $3, $2 }' my.spawn)"

# (b) the Go program's own offsets
"$T/prog" offsets > offsets || fail "prog offsets failed"
cp facts out
for f in net/http.Request.Method net/http.Request.URL net/url.URL.Path; do
	want=$(awk -v f=$f '$2 == f { print $3 }' offsets)
	got=$(awk -v f=$f '$1 == "field" && $2 == f { print $3 }' out)
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "$f: gobin $got, unsafe.Offsetof $want"
done

# (c) gdb's layout of the runtime structs
gdb_off() { # STRUCT MEMBER: the offset of a top-level member, per ptype/o
	gdb -batch -nx -iex 'set auto-load no' -ex 'set language c' -ex "ptype/o struct '$1'" prog 2>/dev/null |
		awk -v m="$2" '
		function name(s) { s = $NF; sub(/;$/, "", s); sub(/^\*+/, "", s); sub(/\[.*/, "", s); return s }
		/^\/\* +[0-9]+ +\| +[0-9]+ \*\// {
			if (depth == 0) off = $2
			if ($NF == "{") depth++
			else if (depth == 0 && name() == m) { print off; exit }
			next
		}
		/^ *} [^ ]+;$/ { if (--depth == 0 && name() == m) { print off; exit } }'
}
for f in runtime.g.goid runtime.g.m runtime.g.startpc runtime.m.curg runtime.m.procid runtime.funcval.fn \
	runtime.pollDesc.rg runtime.pollDesc.wg net/http.Request.Method net/url.URL.Path; do
	s=${f%.*} m=${f##*.}
	want=$(gdb_off "$s" "$m")
	got=$(awk -v f=$f '$1 == "field" && $2 == f { print $3 }' out)
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "$f: gobin $got, gdb $want"
done
echo "go/gobin: fields: $(awk '$1 == "field" { printf "%s=%s ", $2, $3 }' out)"


# (d) reasons, version, arguments, names
cp facts out
for r in "chan receive" select sleep "IO wait"; do
	grep -qx "reason [0-9]* \"$r\"" out || fail "no wait reason \"$r\": $(grep '^reason' out | head -40 | tr '\n' ' ')"
done
want=$(go version | awk '{ print $3 }')
[ "$(awk '$1 == "version" { print $2 }' out)" = "$want" ] || fail "version $(grep '^version' out), go version says $want"
grep -qx 'regabi 1' out || fail "not the register ABI: $(grep '^regabi' out)"
# FN INDEX NAME: the parameters the go class reads (gobin.h)
while read -r fn i name; do
	line=$(awk -v f=$fn -v i=$i '$1 == "arg" && $2 == f && $3 == i' out)
	set -- $line
	if [ "${4:-}" != "$name" ] || [ "${6:--1}" -lt 0 ] || [ "${8:-}" != "${10:-}" ] || [ "${6:-}" != "${8:-}" ]; then
		fail "$fn argument $i: want $name in a register that DWARF and the ABI agree on, got: ${line:-nothing}"
	fi
done <<ARGS
runtime.newproc1 0 fn
runtime.newproc1 1 callergp
runtime.execute 0 gp
runtime.gopark 2 reason
runtime.ready 0 gp
runtime.goexit0 0 gp
runtime.netpollready 1 pd
runtime.netpollready 2 mode
net/http.serverHandler.ServeHTTP 2 req
runtime.runqput 1 gp
ARGS
# and every argument printed: DWARF's register and the ABI's agree where both say one
awk '$1 == "arg" && $8 >= 0 && $10 >= 0 && $8 != $10' out > disagree
[ -s disagree ] && fail "DWARF and the ABI disagree: $(head -3 disagree)"
echo "go/gobin: arguments: $(awk '$1 == "arg" { printf "%s#%s=%s ", $2, $4, $6 }' out)"
np=$(get fn runtime.newproc1 addr) npsize=$(get fn runtime.newproc1 size)
worker=$(nm prog | awk '$3 == "main.worker" { print "0x" $1 }')
for q in "$((np)) runtime.newproc1" "$((np + npsize - 1)) runtime.newproc1" "$((worker + 1)) main.worker" "1 (none)"; do
	set -- $q
	dump --name "$1" prog
	[ "$(tail -1 out)" = "$2" ] || fail "--name $1: $(tail -1 out), want $2"
done

# (e) refusals
check_refused() { # FILE ERRNO WORD
	dump "$1"
	local rc=$?
	[ $rc = 1 ] && grep -q "^refused $2: .*$3" out ||
		fail "$1: want refused $2 saying $3, got rc $rc: $(head -3 out)"
	echo "go/gobin: $1: $(cat out)"
}
check_refused prog.s ENODATA stripped
check_refused prog.strip ENODATA stripped
check_refused prog.w ENODATA DWARF
check_refused "$D" ENOENT "not a Go binary"
printf 'hello' > notelf
check_refused notelf ENOENT "not an ELF"

# (f) hostile copies
size=$(stat -c %s prog)
# the file offset and size of section NAME of FILE, in decimal
secoff() { # NAME FILE
	set -- $(readelf -SW "$2" | sed 's/^ *\[ *[0-9]*\] *//' | awk -v s="$1" '$1 == s { print $4, $5; exit }')
	[ $# = 2 ] && echo $((0x$1)) $((0x$2))
}
rnd() { awk -v s="$1" -v m="$2" 'BEGIN { srand(s); print int(rand() * m) }'; }
# LEN bytes of seed SEED over FILE at OFF
scribble() { # FILE OFF LEN SEED
	LC_ALL=C awk -v n="$3" -v s="$4" 'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%c", int(rand() * 256) }' |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
hostile=0 answered=0 refused_n=0
try() { # FILE: gobindump must answer or refuse
	dump "$1"
	case $? in
	0) answered=$((answered + 1)) ;;
	1) refused_n=$((refused_n + 1)) ;;
	esac
	hostile=$((hostile + 1))
}
read -r symoff symsize <<< "$(secoff .symtab prog)"
read -r dioff disize <<< "$(secoff .debug_info prog)"
read -r rdioff rdisize <<< "$(secoff .debug_info prog.raw)"
[ -n "$symoff" ] && [ -n "$dioff" ] && [ -n "$rdioff" ] || fail "no .symtab or .debug_info in readelf -S"
for len in 0 1 16 63 64 100 4096 $((size / 8)) $((size / 4)) $((size / 2)) $((dioff + 1000)) \
	$((dioff + disize / 2)) $((symoff + 100)) $((symoff + symsize / 2)) $((size - 1)); do
	head -c $len prog > cut
	try cut
done
for seed in $(seq $SEED $((SEED + 5))); do
	for sec in sym di rdi; do
		case $sec in
		sym) f=prog o=$symoff n=$symsize ;;
		di) f=prog o=$dioff n=$disize ;;
		rdi) f=prog.raw o=$rdioff n=$rdisize ;;
		esac
		cp $f hurt
		for k in 1 2 3 4 5 6 7 8; do
			scribble hurt $((o + $(rnd $((seed * 100 + k)) $((n - 64))))) 64 $((seed * 1000 + k))
		done
		try hurt
	done
done
# newproc1: an undefined opcode (06, push es: none in 64-bit mode) at
# its 10th instruction start must cost it its returns
np_off=$(cp facts out; get fn runtime.newproc1 off)
cp prog bad06
start=$(awk 'NR == 10 { print $2 }' <(dump --bounds runtime.newproc1 prog; cat out))
printf '\006' | dd of=bad06 bs=1 seek=$(( $(fileoff 0x$start) )) conv=notrunc status=none
try bad06
grep -q '^ret runtime.newproc1 ok 0 n 0' out && grep -q '^warning.*runtime.newproc1: no instruction decoded at' out ||
	fail "an undefined opcode in newproc1 at 0x$start: $(grep -E '^(warning|ret runtime.newproc1)' out)"
# random bytes over newproc1: what the decoder walks whole it walks as
# objdump does where objdump finds no undefined instruction, and each
# return it gives is a C3 or C2 byte
np_size=$(cp facts out; get fn runtime.newproc1 size)
whole=0 same=0 objbad=0
for seed in $(seq $SEED $((SEED + 29))); do
	cp prog hurt
	len=$((8 + $(rnd $seed 24)))
	scribble hurt $((np_off + $(rnd $((seed + 7)) $((np_size - len))))) $len $seed
	try hurt
	while read -r o; do
		b=$(od -An -tx1 -j $((o)) -N1 hurt | tr -d ' ')
		[ "$b" = c3 ] || [ "$b" = c2 ] || fail "seed $seed: a return of newproc1 at $o is the byte $b"
	done < <(awk '$1 == "retoff" && $2 == "runtime.newproc1" { print $3 }' out)
	dump --bounds runtime.newproc1 hurt
	grep -qx 'end ok' out || continue
	whole=$((whole + 1))
	grep '^insn' out > my.starts
	objdump -d --no-show-raw-insn --start-address=$((np)) --stop-address=$((np + np_size)) hurt > od.fn
	awk '/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); printf "%016s\n", a }' od.fn | tr ' ' 0 | sed 's/^/insn /' > od.starts
	# Where objdump finds an undefined instruction the two may part
	# (an operand rule the decoder does not check, e.g. VEX.vvvv of a
	# store): not code, only counted.
	if grep -q '(bad)' od.fn; then
		objbad=$((objbad + 1))
	elif cmp -s my.starts od.starts; then
		same=$((same + 1))
	else
		fail "seed $seed: random code in newproc1 walked whole, not as objdump: $(diff my.starts od.starts | head -4)"
	fi
done
echo "go/gobin: hostile copies: $hostile, $answered answered, $refused_n refused; random newproc1 code: $whole of 30 walked whole, $same as objdump, $objbad where objdump finds (bad)"

# (f') copies whose runqput call is no longer provably newproc1's own: the
# spawns must be read at newproc1's returns (a site at each, reading
# %rax), with the reason in the warning
np_rets=$(cp facts out; get ret runtime.newproc1 n)
read -r sp_ret sp_call _ < <(awk '$3 == "<runtime.runqput>"' od.spawn)
# objdump's instructions between newproc1's return and the runqput call
awk -v lo=$((sp_ret)) -v hi=$((sp_call)) '/^ +[0-9a-f]+:\t/ { a = $1; sub(":", "", a); v = 0
	for (i = 1; i <= length(a); i++) v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
	if (v >= lo && v < hi) { $1 = ""; print v, $0 } }' od.all > od.stretch
fell_back=
spawn_at_rets() { # FILE WHAT WHY
	dump "$1"
	local n=$(awk '$1 == "spawn" { print $3 }' out) rets=$(grep -c '^spawnsite .* reg 0 at ret$' out)
	if [ "$n" != "$np_rets" ] || [ "$rets" != "$np_rets" ] ||
		! grep -qF "spawns read at its returns ($3)" out; then
		fail "$2: spawns not read at newproc1's $np_rets returns for $3: $(grep -E '^(spawn|warning)' out | tr '\n' ';')"
	fi
	fell_back="$fell_back${fell_back:+, }$2"
}
le_bytes() { # VALUE N: N little-endian bytes as printf escapes
	local v=$1 i s=
	for ((i = 0; i < $2; i++)); do s="$s\\$(printf '%03o' $(((v >> (8 * i)) & 255)))"; done
	echo "$s"
}
poke() { # FILE VADDR BYTES(printf escapes)
	printf "$3" | dd of="$1" bs=1 seek=$(( $(fileoff "$2") )) conv=notrunc status=none
}
# the move of the result into gp's register now moves %rcx
mv_at=$(awk -v r="$gpname" '$2 == "mov" && $3 == "%rax,%" r { print $1; exit }' od.stretch)
if [ -n "$mv_at" ]; then
	cp prog sp_reg
	read -r b0 b1 b2 < <(od -An -tx1 -j $(( $(fileoff "$mv_at") )) -N3 prog)
	case $b1 in
	89) b2=$(printf '%02x' $((0x$b2 ^ 0x08))) ;; # ModRM.reg: rax -> rcx
	8b) b2=$(printf '%02x' $((0x$b2 ^ 0x01))) ;; # ModRM.rm: rax -> rcx
	esac
	poke sp_reg "$mv_at" "\\x$b0\\x$b1\\x$b2"
	spawn_at_rets sp_reg "the result moved from %rcx" "no call followed by runtime.runqput with its result"
fi
# a jump between the two calls: the 5-byte nop there becomes jmp +0
nop_at=$(awk '$2 == "nopl" && $3 == "0x0(%rax,%rax,1)" { print $1; exit }' od.stretch)
if [ -n "$nop_at" ]; then
	cp prog sp_jmp
	poke sp_jmp "$nop_at" '\xe9\x00\x00\x00\x00'
	spawn_at_rets sp_jmp "a jump between the calls" "no call followed by runtime.runqput with its result"
fi
# a jump into that stretch from another function: a 5-byte nop of
# runtime.main becomes jmp to the move
far=$(awk '/^[0-9a-f]+ <runtime.main>:$/ { on = 1; next } /^[0-9a-f]+ </ { on = 0 }
	on && $2 == "nopl" && $3 == "0x0(%rax,%rax,1)" { a = $1; sub(":", "", a); print "0x" a; exit }' od.all)
if [ -n "$far" ] && [ -n "$mv_at" ]; then
	cp prog sp_in
	poke sp_in "$far" "\\xe9$(le_bytes $(((mv_at - far - 5) & 0xffffffff)) 4)"
	objdump -d --no-show-raw-insn --start-address=$((far)) --stop-address=$((far + 5)) sp_in | grep -q "jmp *$(printf '%x' $mv_at) " ||
		fail "the jump written at $far is not objdump's jmp to $mv_at"
	spawn_at_rets sp_in "a jump into them from runtime.main" "code after a call may be reached from elsewhere"
fi
# newproc1's address as a word in data (a funcval would be): .typelink's first
cp prog sp_word
np_addr=$(cp facts out; get fn runtime.newproc1 addr)
read -r tl_off _ <<< "$(secoff .typelink prog)"
printf "$(le_bytes $((np_addr)) 8)" | dd of=sp_word bs=1 seek=$tl_off conv=notrunc status=none
spawn_at_rets sp_word "newproc1's address in .typelink" "a reference to it not proven a direct call"
echo "go/gobin: spawns read at newproc1's returns, saying why, in copies with: $fell_back"
# random bytes over the stretch between newproc1's call and runqput's (and
# a little around it): a call site gobindump still gives is a 5-byte E8
# of the copy whose target is runqput, every other site sits after an E8
# to newproc1 or is one of its returns
nf_lo=$((sp_ret - 8)) nf_len=$((sp_call + 5 - sp_ret + 8))
rq_addr=$(cp facts out; get fn runtime.runqput addr)
kept=0 fell=0
for seed in $(seq $SEED $((SEED + 29))); do
	cp prog hurt
	len=$((1 + $(rnd $seed 6)))
	scribble hurt $(( $(fileoff $((nf_lo + $(rnd $((seed + 3)) $((nf_len - len)))))) )) $len $((seed + 500))
	try hurt
	grep -q '^spawnsite .* at call$' out && kept=$((kept + 1)) || fell=$((fell + 1))
	while read -r o v k; do
		read -r b0 r0 r1 r2 r3 < <(od -An -tx1 -j $((o)) -N5 hurt)
		rel=$((0x$r3$r2$r1$r0)); [ $rel -ge $((0x80000000)) ] && rel=$((rel - 0x100000000))
		[ "$b0" = e8 ] && [ $((v + 5 + rel)) = $((rq_addr)) ] || fail "seed $seed: a call site at $v is not a call of runqput: $b0 $r0 $r1 $r2 $r3"
	done < <(awk '$1 == "spawnsite" && $8 == "call" { print $2, $4 }' out)
done
echo "go/gobin: random bytes between newproc1's call and runqput's: $kept copies kept a call site (a call of runqput each), $fell read spawns elsewhere"

[ $failed = 0 ] && echo "go/gobin: PASS"
exit $failed
