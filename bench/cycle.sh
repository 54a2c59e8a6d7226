#!/usr/bin/env bash
# The monthly cycle under load with 1,000 and with 100,000 bills in the
# account: GET /v1/bills?limit=100 (first page and half way down) and
# POST /v1/meter-readings, on SQLite and (with RENTAPI_BENCH_POSTGRES) on
# PostgreSQL. Keyset paging should make page time independent of the table.
#
#   bench/cycle.sh
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/cycle.sh
#   SIZES="1000" DURATION=5s bench/cycle.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${DURATION:-10s}"
conns="${CONNECTIONS:-16}"
sizes="${SIZES:-1000 100000}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/rentapi" ./cmd/rentapi
go build -o "$work/cycle" ./bench/cycle

# measure ENGINE BILLS DSN
measure() {
	local engine="$1" bills="$2" dsn="$3"
	local log="$work/serve-$engine-$bills.out"
	local env=(RENTAPI_DB="$dsn" RENTAPI_SECRET_FILE="$work/secret")
	env "${env[@]}" "$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false >"$log" 2>"$work/serve.log" &
	local pid=$!
	for _ in $(seq 100); do grep -q 'listening on' "$log" && break; sleep 0.1; done
	local base key
	base=$(grep -o 'http://[0-9.:]*' "$log" | tail -1)
	local t0=$SECONDS
	local seedlog="$work/seed-$engine-$bills.log"
	if ! key=$("$work/cycle" -db "$dsn" -secret-file "$work/secret" -bills "$bills" seed 2>"$seedlog"); then
		cat "$seedlog" >&2
		exit 1
	fi
	echo "$engine, $bills bills (seeded in $((SECONDS - t0)) s):"
	"$work/cycle" -url "$base" -key "$key" -duration "$duration" -c "$conns" load
	kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "monthly cycle — $duration per run, $conns connections, $(nproc) cores, $(go version | cut -d' ' -f3)"
for n in $sizes; do
	measure sqlite "$n" "sqlite:$work/cycle-$n.db"
	if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
		schema="bench_$RANDOM$RANDOM"
		psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
		sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
		measure postgres "$n" "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema"
		psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null
	fi
done
