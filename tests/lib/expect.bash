# Shared by the command-line tests (tests/analyze_cli.sh,
# tests/export/cli.sh): expect RC PATTERN -- ARGS... runs $EXPECT_PROG
# with ARGS and checks its exit code and that its stderr has PATTERN (none
# when empty); its stdout and stderr are left in $T/out and $T/err. The
# caller has T and fail().
expect() {
	local want=$1 pat=$2
	shift 3
	"$EXPECT_PROG" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$EXPECT_PROG $*: exit $rc, want $want ($(head -3 "$T/err"))"
	[ -z "$pat" ] || grep -q -- "$pat" "$T/err" || fail "$EXPECT_PROG $*: no '$pat' in: $(cat "$T/err")"
}
