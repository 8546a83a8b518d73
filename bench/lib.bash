# Sourced by the benchmarks that compare runs: small figures helpers.

# The median of the numbers on stdin, one a line (the mean of the two
# middle ones for an even count).
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# A over B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# BPF run-time statistics for as long as the process started here lives
# (its pid in STATS_PID; the caller stops it): it holds the fd that
# BPF_ENABLE_STATS returns, which, unlike kernel.bpf_stats_enabled,
# changes nobody else's setting and cannot be turned off by another
# benchmark meanwhile. @return 1 when the kernel refused.
bpf_stats_hold() { # scratch-file
	# A file left by an earlier hold would be read before the new
	# process truncates it.
	rm -f "$1"
	python3 -c 'import ctypes, signal
attr = ctypes.c_uint32(0)  # BPF_STATS_RUN_TIME
fd = ctypes.CDLL(None, use_errno=True).syscall(321, 32, ctypes.byref(attr), 4)  # SYS_bpf, BPF_ENABLE_STATS
print(fd, flush=True)
signal.pause()' >"$1" &
	STATS_PID=$!
	until [ -s "$1" ]; do sleep 0.1; done
	[ "$(cat "$1")" -ge 0 ]
}
