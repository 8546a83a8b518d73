# Sourced by the benchmarks that compare runs: small figures helpers.

# The median of the numbers on stdin, one a line (the mean of the two
# middle ones for an even count).
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# A over B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
