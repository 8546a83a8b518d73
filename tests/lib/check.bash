# Shared by the scripts that need no BPF (tests/faults/analyze_signal.sh,
# outputs.sh): sourced with CHECK_NAME set. A scratch directory T removed
# at exit, and fail(), which says what failed and marks the run failed.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0
fail() {
	echo "$CHECK_NAME: FAIL: $*" >&2
	failed=1
}
