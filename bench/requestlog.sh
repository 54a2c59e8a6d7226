#!/usr/bin/env bash
# What the portal's request log costs the request path: GET /v1/bills?limit=20
# from concurrent clients, with the log and without it, over the same
# database, in alternating runs (each a process and a database of its
# own), and the median
# requests a second of each. BenchmarkRequestLog (internal/api) is the
# load; the issue's bar is under 5 % apart.
#
#   bench/requestlog.sh [runs] [engine]     # defaults: 6 sqlite; engine postgres needs RENTAPI_TEST_POSTGRES
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-6}"
engine="${2:-sqlite}"
go test -c -o /tmp/rentapi-api.test ./internal/api
out=$(mktemp)
# Each side in a process of its own over a fresh database, the two in
# turn and each first every other time: a process's first benchmark pays
# for its warm-up.
for ((i = 1; i <= runs; i++)); do
	order="log nolog"
	((i % 2)) || order="nolog log"
	for side in $order; do
		/tmp/rentapi-api.test -test.run '^$' -test.bench "RequestLog/^$engine\$/^$side\$" -test.count 1 -test.benchtime 3s | grep -E '^BenchmarkRequestLog' | tee -a "$out"
	done
done
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
log=$(grep '/log-' "$out" | awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "req/s") print $i }' | median)
nolog=$(grep '/nolog-' "$out" | awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "req/s") print $i }' | median)
echo "median req/s: with the log $log, without $nolog; the log costs $(awk -v a="$log" -v b="$nolog" 'BEGIN { printf "%.1f", (b - a) / b * 100 }') %"
