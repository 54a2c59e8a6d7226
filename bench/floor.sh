#!/usr/bin/env bash
# floor.sh: the p99 a server gets on this machine at a fixed rate of half
# its own maximum, against the CPU each of its requests costs. Bare net/http
# (bench/baseline) answering the 12 KB bills page is made to spend a fixed
# amount of CPU on each request (-work); rentapi on SQLite, GET
# /v1/bills?limit=20 seeded like compare.sh's, is the last row. So a p99
# target stated at half the maximum can be set against what any server of
# rentapi's cost gets here, measured in the same run.
#
#   bench/floor.sh
#   WORKS="0 100 300" DURATION=8s ROUNDS=3 bench/floor.sh
#   RATE=4000 WORKS="150 250" bench/floor.sh   # every row at one rate instead
#
# Each row, each round: wrk -t2 -c32 for DURATION gives the maximum, then
# cycle pace at half of it for DURATION gives p50 and p99 (timed from when
# each request was due), and the server's utime+stime over the paced
# requests gives its CPU per request. With RATE, no maximum is measured
# and every row is paced at RATE: servers of about the same CPU a request
# then meet the same load, the pacer's included. Rows are rotated between
# rounds; the summary is each row's median over the rounds.
set -euo pipefail
works="${WORKS:-0 50 100 150 200 300}" fixed="${RATE:-}" duration="${DURATION:-8s}" rounds="${ROUNDS:-3}" conns="${CONNECTIONS:-32}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
work=$(mktemp -d)
declare -A pid url key
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/cycle" ./bench/cycle
go build -o "$work/baseline" ./bench/baseline
go build -o "$work/rentapi" ./cmd/rentapi

# started NAME COMMAND...: runs a server, waits for its address.
started() {
	local name=$1
	shift
	"$@" >"$work/$name.out" 2>"$work/$name.log" &
	pid[$name]=$!
	for _ in $(seq 100); do grep -q 'listening on' "$work/$name.out" && break; sleep 0.1; done
	url[$name]=$(grep -o 'http://[0-9.:]*' "$work/$name.out" | tail -1)
	[ -n "${url[$name]}" ] || { echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
}

started rentapi env RENTAPI_DB="sqlite:$work/r.db" RENTAPI_SECRET_FILE="$work/secret" \
	"$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false
key[rentapi]=$("$work/cycle" -db "sqlite:$work/r.db" -secret-file "$work/secret" -bills 1000 seed 2>>"$work/seed.log")
curl -fsS -H "Authorization: Bearer ${key[rentapi]}" "${url[rentapi]}/v1/bills?limit=20" >"$work/body.json"
rows=()
for w in $works; do
	started "work-$w" "$work/baseline" -body "$work/body.json" -work "${w}us"
	rows+=("work-$w")
done
rows+=(rentapi)

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)
# row NAME ROUND: one maximum (none with RATE) and one paced run; appends
# "max rate p50 p99 cpu" to res-NAME.
row() {
	local name=$1 r=$2 auth=()
	[ -n "${key[$name]:-}" ] && auth=(-H "Authorization: Bearer ${key[$name]}")
	local max=- rate=$fixed t0 t1 out n
	if [ -z "$fixed" ]; then
		max=$(wrk -t2 -c"$conns" -d"$duration" "${auth[@]}" "${url[$name]}/v1/bills?limit=20" | awk '/^Requests\/sec:/ {printf "%.0f", $2}')
		rate=$((max / 2))
	fi
	t0=$(cpu "${pid[$name]}")
	out=$("$work/cycle" -url "${url[$name]}" -key "${key[$name]:-}" -rate "$rate" -duration "$duration" -c "$conns" pace)
	t1=$(cpu "${pid[$name]}")
	n=$(grep -o '([0-9]* requests' <<<"$out" | tr -dc 0-9)
	awk -v max="$max" -v rate="$rate" -v d=$((t1 - t0)) -v n="$n" -v hz="$tick" -v out="$out" 'BEGIN {
		split(out, f, " +")
		for (i in f) { if (f[i] == "p50") p50 = f[i + 1]; if (f[i] == "p99") p99 = f[i + 1] }
		printf "%s %s %s %s %.0f\n", max, rate, p50, p99, d / hz * 1e6 / n
	}' | tee -a "$work/res-$name" | sed "s/^/round $r $name: max rate p50 p99 cpu-us /"
}

how="wrk -t2 -c$conns -d$duration, then cycle pace at half for $duration"
[ -n "$fixed" ] && how="cycle pace at $fixed req/s for $duration"
echo "floor — $how, $rounds rounds, $(nproc) cores (load generators included), $(go version | cut -d' ' -f3)"
for name in "${rows[@]}"; do # warm-up, not counted: pools, caches, the heap
	"$work/cycle" -url "${url[$name]}" -key "${key[$name]:-}" -rate 2000 -duration 2s -c "$conns" pace >/dev/null
done
n=${#rows[@]}
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < n; i++)); do
		row "${rows[$(((i + r * n / rounds) % n))]}" $((r + 1))
	done
done

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '\n%-12s %10s %10s %8s %8s %12s\n' server max/s rate/s p50-ms p99-ms cpu-us/req
for name in "${rows[@]}"; do
	col() { awk -v c="$1" '{print $c}' "$work/res-$name" | median; }
	printf '%-12s %10s %10s %8s %8s %12s\n' "$name" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)"
done
