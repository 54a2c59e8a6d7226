#!/usr/bin/env bash
# floor.sh: the p99 a server gets on this machine at a fixed rate of half
# its own maximum, against the CPU each of its requests costs. Bare net/http
# (bench/baseline) answering the 12 KB bills page is made to spend a fixed
# amount of CPU on each request (-work); rentapi on SQLite, GET
# /v1/bills?limit=20 seeded like compare.sh's, is the last row. So a p99
# target stated at half the maximum can be set against what any server of
# rentapi's cost gets here, measured in the same run. With ENGINE=postgres
# (and RENTAPI_BENCH_POSTGRES) rentapi runs on PostgreSQL, and a row
# pg-trip is bare net/http making one round trip to the same PostgreSQL
# before each answer (`baseline -postgres`, a pool of 10 like rentapi's):
# what a server that asks its database once a request gets here.
#
#   bench/floor.sh
#   WORKS="0 100 300" DURATION=8s ROUNDS=3 bench/floor.sh
#   RATE=4000 WORKS="150 250" bench/floor.sh   # every row at one rate instead
#   WORKS=0 PROCS="2 3 4" bench/floor.sh        # rentapi rows at those GOMAXPROCS
#   ENGINE=postgres RENTAPI_BENCH_POSTGRES=... WORKS=0 bench/floor.sh
#
# Each row, each round: wrk -t2 -c32 for DURATION gives the maximum, then
# cycle pace at half of it for DURATION gives p50 and p99 (timed from when
# each request was due), and the server's utime+stime over the paced
# requests gives its CPU per request; then bare net/http (work-0) is paced
# at the same rate, and the row's p99 over bare's is its tail ratio, as
# issue 35 states its tail target (at most 2): the summary gives the median
# of each round's. So it shows what ratio a server doing nothing but
# spending a given CPU a request gets here. With RATE, no maximum is
# measured and every row is paced at RATE: servers of about the same CPU a
# request then meet the same load, the pacer's included, and the ratio is
# over the work-0 row's median p99. Rows are rotated between rounds; the
# summary is each row's median over the rounds.
set -euo pipefail
works="${WORKS:-0 50 100 150 200 300}" fixed="${RATE:-}" duration="${DURATION:-8s}" rounds="${ROUNDS:-3}" conns="${CONNECTIONS:-32}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
# shellcheck source=bench/lib.sh
. bench/lib.sh
go build -o "$work/baseline" ./bench/baseline
go build -o "$work/rentapi" ./cmd/rentapi

# PROCS: one rentapi row at each of those GOMAXPROCS (rentapi-pN), else one
# row as rentapi sets itself.
servers=()
for p in ${PROCS:-}; do
	seeded "rentapi-p$p" "$work/rentapi" "GOMAXPROCS=$p"
	servers+=("rentapi-p$p")
done
[ -n "${PROCS:-}" ] || { seeded rentapi "$work/rentapi"; servers=(rentapi); }
curl -fsS -H "Authorization: Bearer ${key[${servers[0]}]}" "${url[${servers[0]}]}/v1/bills?limit=20" >"$work/body.json"
rows=()
for w in $works; do
	started "work-$w" "$work/baseline" -body "$work/body.json" -work "${w}us"
	rows+=("work-$w")
done
if [ "${ENGINE:-sqlite}" = postgres ]; then
	started pg-trip "$work/baseline" -body "$work/body.json" -postgres "$RENTAPI_BENCH_POSTGRES"
	rows+=(pg-trip)
fi
rows+=("${servers[@]}")
# work-0 is bare net/http, the tail ratio's reference: there even when not a row.
[ -n "${pid[work-0]:-}" ] || started work-0 "$work/baseline" -body "$work/body.json" -work 0us

# row NAME ROUND: one maximum (none with RATE) and one paced run; appends
# "max rate p50 p99 cpu bare-p99" to res-NAME. Without RATE, bare-p99 is
# bare's (work-0's) p99 paced at the same rate right after; with RATE, the
# work-0 row is that already, and the summary takes its median.
row() {
	local name=$1 r=$2 auth=() max=- rate=$fixed line bare=-
	[ -n "${key[$name]:-}" ] && auth=(-H "Authorization: Bearer ${key[$name]}")
	if [ -z "$fixed" ]; then
		max=$(wrk -t2 -c"$conns" -d"$duration" "${auth[@]}" "${url[$name]}/v1/bills?limit=20" | awk '/^Requests\/sec:/ {printf "%.0f", $2}')
		rate=$((max / 2))
	fi
	line=$(paced "$name" "$rate" "$duration" | awk -v max="$max" -v rate="$rate" '{
		for (i = 1; i <= NF; i++) { if ($i == "p50") p50 = $(i + 1); if ($i == "p99") p99 = $(i + 1) }
		printf "%s %s %s %s %s\n", max, rate, p50, p99, $(NF - 1)
	}')
	if [ -z "$fixed" ]; then
		bare=$(paced work-0 "$rate" "$duration" | awk '{for (i = 1; i <= NF; i++) if ($i == "p99") print $(i + 1)}')
	fi
	echo "$line $bare" | tee -a "$work/res-$name" | sed "s/^/round $r $name: max rate p50 p99 cpu-us bare-p99 /"
}

how="wrk -t2 -c$conns -d$duration, then cycle pace at half for $duration"
[ -n "$fixed" ] && how="cycle pace at $fixed req/s for $duration"
echo "floor — $how, $rounds rounds, $(nproc) cores (load generators included), $(go version | cut -d' ' -f3)"
for name in "${rows[@]}" work-0; do # warm-up, not counted: pools, caches, the heap
	paced "$name" 2000 2s >/dev/null
done
n=${#rows[@]}
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < n; i++)); do
		row "${rows[$(((i + r * n / rounds) % n))]}" $((r + 1))
	done
done

printf '\n%-12s %10s %10s %8s %8s %12s %10s %7s\n' server max/s rate/s p50-ms p99-ms cpu-us/req bare-p99 ratio
for name in "${rows[@]}"; do
	col() { awk -v c="$1" '{print $c}' "$work/res-$name" | median; }
	if [ -n "$fixed" ]; then # bare's p99 is the work-0 row's, at the same rate
		bare=$(awk '{print $4}' "$work/res-work-0" 2>/dev/null | median)
		ratio=$(awk -v a="$(col 4)" -v b="$bare" 'BEGIN {if (b > 0) printf "%.1f", a / b; else print "-"}')
	else # each round's engine p99 over bare's at its rate, the median of those
		bare=$(col 6)
		ratio=$(awk '$6 > 0 {printf "%.2f\n", $4 / $6}' "$work/res-$name" | median)
	fi
	printf '%-12s %10s %10s %8s %8s %12s %10s %7s\n' "$name" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "${bare:--}" "${ratio:--}"
done
