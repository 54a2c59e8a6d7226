#!/usr/bin/env bash
# month.sh: a whole property's month, two ways, on each engine: (a) a
# reading POST and a bill POST per room, and (b) one readings batch and
# one bill run, each on a property of its own with the same rooms and
# tenants. Prints wall time, requests and the server's CPU time for each
# (bench/month). See bench/README.md.
#
#   bench/month.sh
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/month.sh
#   ROOMS=500 CONNECTIONS=8 ROUNDS=3 bench/month.sh
#   RENTAPI_BIN=/tmp/rentapi bench/month.sh     # a rentapi built elsewhere
#   RENTAPI_BIN=/tmp/rentapi-old SEED=/tmp/cycle-old bench/month.sh   # one of an older schema, with its seeder
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rooms="${ROOMS:-500}"
conns="${CONNECTIONS:-8}"
rounds="${ROUNDS:-3}"
work=$(mktemp -d)
schema=""
declare -A pid
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$schema" ]; then psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- cmd internal || echo '+changes')"
if [ -n "${RENTAPI_BIN:-}" ]; then
	cp "$RENTAPI_BIN" "$work/rentapi"
	rev="$RENTAPI_BIN"
else
	go build -o "$work/rentapi" ./cmd/rentapi
fi
go build -o "$work/cycle" ./bench/cycle
go build -o "$work/month" ./bench/month
echo "rentapi $rev, $rooms rooms, (a) at $conns in flight, load $(cut -d' ' -f1-3 /proc/loadavg)"

# month ENGINE DSN: serves DSN with the per-second limits off, links a
# landlord on the pro plan (cycle seed) and measures the month, each round
# on two new properties.
month() {
	local engine="$1" dsn="$2" url key
	env RENTAPI_DB="$dsn" RENTAPI_SECRET_FILE="$work/secret-$engine" "$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false \
		>"$work/$engine.out" 2>"$work/$engine.log" &
	pid[$engine]=$!
	for _ in $(seq 100); do grep -q 'listening on' "$work/$engine.out" && break; sleep 0.1; done
	url=$(grep -o 'http://[0-9.:]*' "$work/$engine.out" | tail -1)
	[ -n "$url" ] || { echo "$engine did not start:" >&2; cat "$work/$engine.log" >&2; exit 1; }
	key=$("${SEED:-$work/cycle}" -db "$dsn" -secret-file "$work/secret-$engine" -bills 1 -months 1 seed 2>>"$work/seed.log") || { cat "$work/seed.log" >&2; exit 1; }
	for r in $(seq "$rounds"); do
		echo "$engine, round $r:"
		"$work/month" -url "$url" -key "$key" -rooms "$rooms" -c "$conns" -pid "${pid[$engine]}" -month "$(date -d "-$r month" +%Y-%m)" |
			tee -a "$work/$engine.rounds"
	done
	# The medians of the rounds' wall times (the lower middle one when
	# ROUNDS is even), and (a)'s over (b)'s: the figure issue 32 asks for.
	awk -v engine="$engine" '
		function median(v, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			return v[int((n + 1) / 2)]
		}
		/^\(a\)/ { a[++na] = $(NF-7) }
		/^\(b\)/ { b[++nb] = $(NF-7) }
		END { ma = median(a, na); mb = median(b, nb); printf "%s: median wall (a) %.3f s, (b) %.3f s: (b) %.1fx faster\n", engine, ma, mb, ma / mb }
	' "$work/$engine.rounds"
	kill "${pid[$engine]}"
	wait "${pid[$engine]}" 2>/dev/null || true
	unset "pid[$engine]"
}

month sqlite "sqlite:$work/bench.db"
if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
	schema="bench_$RANDOM$RANDOM"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
	sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
	month postgres "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema"
else
	echo "RENTAPI_BENCH_POSTGRES is not set: no PostgreSQL rows" >&2
fi
