#!/usr/bin/env bash
# Throughput and latency of GET /v1/properties?limit=20 with a valid key, on
# SQLite and (when RENTAPI_BENCH_POSTGRES holds a DSN) PostgreSQL, next to a
# bare net/http handler returning the same bytes, in one run on one machine.
#
#   bench/list-properties.sh            # 10 s per target, 32 connections
#   DURATION=30s CONNECTIONS=64 bench/list-properties.sh
#
# Load comes from hey (pinned, installed with go install) over loopback.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${DURATION:-10s}"
conns="${CONNECTIONS:-32}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

GOBIN="$work/bin" go install github.com/rakyll/hey@v0.1.4
hey="$work/bin/hey"
go build -o "$work/rentapi" ./cmd/rentapi
go build -o "$work/baseline" ./bench/baseline

# start CMD...: runs a server in the background and prints its base URL.
start() {
	local log="$work/$RANDOM.out"
	"$@" >"$log" 2>>"$work/server.log" &
	for _ in $(seq 100); do
		if grep -q 'listening on' "$log"; then
			grep -o 'http://[0-9.:]*' "$log" | tail -1
			return
		fi
		sleep 0.1
	done
	echo "server did not start: $(cat "$log" "$work/server.log")" >&2
	exit 1
}

# measure NAME URL [KEY]: one hey run, summarised on one line.
measure() {
	local name="$1" url="$2" key="${3:-}"
	local out="$work/hey-$name.txt"
	"$hey" -z "$duration" -c "$conns" ${key:+-H "Authorization: Bearer $key"} "$url" >"$out"
	local rps p50 p99 codes
	rps=$(awk '/Requests\/sec/ {print $2}' "$out")
	p50=$(awk '/ 50% in/ {print $3*1000}' "$out")
	p99=$(awk '/ 99% in/ {print $3*1000}' "$out")
	codes=$(awk '/Status code distribution/ {f=1; next} f && /\[/ {printf "%s%s", sep, $1 $2; sep=" "}' "$out")
	printf '%-22s %10.0f req/s   p50 %7.2f ms   p99 %7.2f ms   %s\n' "$name" "$rps" "$p50" "$p99" "$codes"
}

# target NAME DSN: serve the database, seed 25 properties, measure the list.
target() {
	local name="$1" dsn="$2"
	local env=(RENTAPI_DB="$dsn" RENTAPI_SECRET_FILE="$work/secret-$name")
	local base key landlord account
	base=$(start env "${env[@]}" "$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false)
	landlord=$(env "${env[@]}" "$work/rentapi" admin create-landlord --name Bench --plan pro)
	account=$(env "${env[@]}" "$work/rentapi" admin link-account --landlord "$landlord")
	key=$(env "${env[@]}" "$work/rentapi" admin create-key --mode live --account "$account")
	for i in $(seq 25); do
		curl -sf -o /dev/null -X POST "$base/v1/properties" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
			-d "{\"name\":\"Baan Suk $i\",\"address\":\"$i Soi Sukhumvit 71, Bangkok\",\"electricity_rate\":800,\"water_rate\":1800}"
	done
	curl -sf -o "$work/body.json" -H "Authorization: Bearer $key" "$base/v1/properties?limit=20"
	measure "rentapi-$name" "$base/v1/properties?limit=20" "$key"
}

echo "GET /v1/properties?limit=20 — $duration, $conns connections, $(nproc) cores, $(go version | cut -d' ' -f3)"
target sqlite "sqlite:$work/bench.db"
if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
	schema="bench_$RANDOM$RANDOM"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
	sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
	target postgres "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null
fi
base=$(start "$work/baseline" -body "$work/body.json")
measure "bare-nethttp" "$base/v1/properties?limit=20"
echo "response body: $(wc -c <"$work/body.json") bytes"
