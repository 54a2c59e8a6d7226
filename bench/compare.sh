#!/usr/bin/env bash
# The side-by-side comparison of issue 15, in one run on this machine: a
# bare net/http server answering with the bytes of a bills page, GET
# /v1/bills?limit=20 and POST /v1/meter-readings on rentapi over SQLite and
# (with RENTAPI_BENCH_POSTGRES) PostgreSQL, and the same list and a create
# on PocketBase, each under `wrk -t2 -c32 --latency`, the targets rotated
# over the rounds; then GET bills at a fixed rate of half the maximum
# measured (with bare at the same rate, and the tail ratio), the page
# plain and conditional (304) with the server's CPU for each, each
# server's peak RSS, and the webhook burst (bench/webhooks.sh). See
# bench/README.md.
#
#   bench/compare.sh
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/compare.sh
#   DURATION=5s ROUNDS=1 bench/compare.sh
#   REV=main~3 bench/compare.sh          # rentapi (its seed, its webhooks) built from another commit
#   RENTAPI_BIN=/path/to/rentapi bench/compare.sh
#   KEEP=1 bench/compare.sh              # keep wrk's outputs and the logs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${DURATION:-10s}"
conns="${CONNECTIONS:-32}"
rounds="${ROUNDS:-3}"
threads=2
pocketbase="${POCKETBASE:-v0.39.8}"
superuser='bench@example.com:bench-password-1234'
work="$(mktemp -d)"
schema=""
cleanup() {
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -n "$schema" ]; then psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null || true; fi
	if [ "${KEEP:-}" = 1 ]; then echo "outputs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
repo="$PWD"
if [ -n "${RENTAPI_BIN:-}" ]; then
	rentapi="$RENTAPI_BIN"
	built="$RENTAPI_BIN"
elif [ -n "${REV:-}" ]; then
	mkdir "$work/src"
	git archive "$REV" | tar -x -C "$work/src"
	(cd "$work/src" && go build -o "$work/rentapi" ./cmd/rentapi)
	rentapi="$work/rentapi"
	built="$(git rev-parse --short "$REV") ($REV)"
else
	go build -o "$work/rentapi" ./cmd/rentapi
	rentapi="$work/rentapi"
	built="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- cmd internal || echo '+changes')"
fi
go build -o "$work/baseline" ./bench/baseline
go build -o "$work/cycle" ./bench/cycle
cycle="$work/cycle"
# The seed writes the database directly, so it is the measured build's
# own: another revision's tables are not this one's.
seeder="$cycle"
if [ -n "${REV:-}" ] && [ -z "${RENTAPI_BIN:-}" ]; then
	(cd "$work/src" && go build -o "$work/seeder" ./bench/cycle)
	seeder="$work/seeder"
fi

# PocketBase at $pocketbase from the module proxy: a main that starts it
# with nothing registered.
pb=""
mkdir "$work/pb"
cat >"$work/pb/main.go" <<'EOF'
// Command pocketbase is PocketBase as its module ships it, for bench/compare.sh.
package main

import (
	"log"

	"github.com/pocketbase/pocketbase"
)

func main() {
	if err := pocketbase.New().Start(); err != nil {
		log.Fatal(err)
	}
}
EOF
if (cd "$work/pb" && go mod init pocketbench && go get "github.com/pocketbase/pocketbase@$pocketbase" &&
	go mod tidy && go build -o "$work/pocketbase" .) >"$work/pb/build.log" 2>&1; then
	pb="$work/pocketbase"
else
	echo "PocketBase $pocketbase could not be built; its rows are skipped:" >&2
	tail -5 "$work/pb/build.log" >&2
fi

# serve NAME CMD...: runs a server in the background; sets pid[NAME] and,
# from the "listening on URL" line it prints, url[NAME].
declare -A pid url
serve() {
	local name="$1"
	shift
	"$@" >"$work/$name.out" 2>"$work/$name.log" &
	pid[$name]=$!
	for _ in $(seq 100); do
		if grep -q 'listening on' "$work/$name.out"; then
			url[$name]=$(grep -o 'http://[0-9.:]*' "$work/$name.out" | tail -1)
			return
		fi
		sleep 0.1
	done
	echo "$name did not start:" >&2
	cat "$work/$name.out" "$work/$name.log" >&2
	exit 1
}

# rentapi ENGINE DSN: serves DSN with the per-second limits off and seeds
# one landlord with 1,000 bills (10 rooms × 100 months: key[ENGINE]) to
# list, and WRITERS landlords of 200 rooms of one month each, for the
# writes to make new readings in (writes-ENGINE.lua, writes-ENGINE-1.lua
# for the first landlord alone).
declare -A key
rentapi() {
	local engine="$1" dsn="$2" writers="$3"
	serve "$engine" env RENTAPI_DB="$dsn" RENTAPI_SECRET_FILE="$work/secret-$engine" "$rentapi" serve --addr 127.0.0.1:0 --rate-limits=false
	local seed=("$seeder" -db "$dsn" -secret-file "$work/secret-$engine") keys writers_keys
	key[$engine]=$("${seed[@]}" -bills 1000 seed 2>>"$work/seed.log") || { cat "$work/seed.log" >&2; exit 1; }
	keys=$("${seed[@]}" -bills 200 -months 1 -landlords "$writers" seed 2>>"$work/seed.log") || { cat "$work/seed.log" >&2; exit 1; }
	mapfile -t writers_keys <<<"$keys"
	"$cycle" -url "${url[$engine]}" lua "${writers_keys[@]}" >"$work/writes-$engine.lua"
	"$cycle" -url "${url[$engine]}" lua "${writers_keys[0]}" >"$work/writes-$engine-1.lua"
}

echo "seeding..." >&2
rentapi sqlite "sqlite:$work/bench.db" 1
engines=(sqlite)
if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
	schema="bench_$RANDOM$RANDOM"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
	sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
	rentapi postgres "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema" 20
	engines+=(postgres)
else
	echo "RENTAPI_BENCH_POSTGRES is not set: no PostgreSQL rows" >&2
fi
curl -sf -o "$work/bills.json" -H "Authorization: Bearer ${key[sqlite]}" "${url[sqlite]}/v1/bills?limit=20"
serve bare "$work/baseline" -body "$work/bills.json"
# pocketbase: serves PocketBase with a superuser and the bills collection
# (see cycle's pocketbase); sets url[pocketbase] and pbtoken.
pocketbase() {
	"$pb" superuser upsert "${superuser%%:*}" "${superuser#*:}" --dir "$work/pb_data" >/dev/null || return 1
	"$pb" serve --http 127.0.0.1:0 --dir "$work/pb_data" >"$work/pocketbase.out" 2>"$work/pocketbase.log" &
	pid[pocketbase]=$!
	# PocketBase prints the address it was given, not the port it got.
	local port=""
	for _ in $(seq 100); do
		port=$(ss -ltnpH 2>/dev/null | grep "pid=${pid[pocketbase]}," | grep -o '127.0.0.1:[0-9]*' | head -1 || true)
		[ -n "$port" ] && curl -sf -o /dev/null "http://$port/api/health" && break
		sleep 0.1
	done
	url[pocketbase]="http://$port"
	pbtoken=$("$cycle" -url "${url[pocketbase]}" -superuser "$superuser" -like "$work/bills.json" -records 1000 -record "$work/record.json" pocketbase)
}
if [ -n "$pb" ] && ! pocketbase; then
	echo "PocketBase did not start or could not be seeded; its rows are skipped:" >&2
	cat "$work/pocketbase.log" >&2
	pb=""
fi

# The targets, in the order of the table; rounds rotate it.
targets=(bare get-sqlite)
[ -n "${url[postgres]:-}" ] && targets+=(get-postgres)
[ -n "$pb" ] && targets+=(get-pocketbase)
targets+=(post-sqlite)
[ -n "${url[postgres]:-}" ] && targets+=(post-postgres-20 post-postgres-1)
[ -n "$pb" ] && targets+=(post-pocketbase)
declare -A label=(
	[bare]="bare net/http, the same $(wc -c <"$work/bills.json") bytes"
	[get-sqlite]="GET /v1/bills?limit=20, SQLite, 1,000 bills"
	[get-postgres]="same on PostgreSQL"
	[get-pocketbase]="PocketBase $pocketbase list 20 of 1,000, skipTotal=1"
	[post-sqlite]="POST /v1/meter-readings, SQLite"
	[post-postgres-20]="same on PostgreSQL, 20 landlords"
	[post-postgres-1]="same on PostgreSQL, one landlord"
	[post-pocketbase]="PocketBase create record"
)
# months[FILE] is how far the writes over a landlords file have gone.
declare -A months

# measure TARGET ROUND: one wrk run; appends "rps p50 p99 bad" to
# res-TARGET, p50 and p99 in ms, bad the answers that were not the
# success expected (by status) and wrk's socket errors.
measure() {
	local t="$1" r="$2" out="$work/wrk-$1-$2.txt"
	local wrk=(wrk -t"$threads" -c"$conns" -d"$duration" --latency)
	local data
	case "$t" in
	bare) "${wrk[@]}" "${url[bare]}/v1/bills?limit=20" ;;
	get-sqlite | get-postgres)
		"${wrk[@]}" -H "Authorization: Bearer ${key[${t#get-}]}" "${url[${t#get-}]}/v1/bills?limit=20" ;;
	get-pocketbase)
		"${wrk[@]}" -H "Authorization: $pbtoken" "${url[pocketbase]}/api/collections/bills/records?perPage=20&skipTotal=1" ;;
	post-sqlite | post-postgres-20 | post-postgres-1)
		local engine=${t#post-}
		engine=${engine%-*}
		data="$work/writes-$engine.lua"
		[ "$t" = post-postgres-1 ] && data="$work/writes-postgres-1.lua"
		# Both postgres files name the first landlord's rooms: one count.
		local m="$work/months-$engine"
		"${wrk[@]}" -s bench/wrk.lua "${url[$engine]}/v1/meter-readings" -- readings "$data" "${months[$m]:-0}" "$threads" "$$-$t-$r" ;;
	post-pocketbase)
		"${wrk[@]}" -s bench/wrk.lua -H "Authorization: $pbtoken" "${url[pocketbase]}/api/collections/bills/records" -- body "$work/record.json" ;;
	esac >"$out" 2>&1 || { echo "wrk failed on $t:" >&2; cat "$out" >&2; exit 1; }
	if [[ "$t" == post-sqlite || "$t" == post-postgres-* ]]; then
		months[$m]=$(( ${months[$m]:-0} + $(awk '/^months / {m = $2} END {print m + 0}' "$out") ))
	fi
	local ok=2xx
	[[ "$t" == post-[sp]* && "$t" != post-pocketbase ]] && ok=201
	awk -v ok="$ok" '
		function ms(v) {
			if (v ~ /us$/) return v / 1000
			if (v ~ /ms$/) return v + 0
			if (v ~ /m$/) return v * 60000
			return v * 1000
		}
		/^Requests\/sec:/ { rps = $2 }
		$1 == "50%" { p50 = ms($2) }
		$1 == "99%" { p99 = ms($2) }
		/Non-2xx or 3xx responses:/ { non2xx = $NF }
		/Socket errors:/ { gsub(",", ""); for (i = 3; i <= NF; i += 2) if ($(i+1) > 0) bad = bad sep $i "×" $(i+1); sep = " " }
		/^status / {
			statuses = 1
			if (ok == "201" ? $2 != 201 : $2 !~ /^2/) { bad = bad sep $2 "×" $3; sep = " " }
		}
		END {
			if (!statuses && non2xx > 0) { bad = bad sep "non-2xx×" non2xx }
			printf "%s %s %s %s\n", rps, p50, p99, (bad == "" ? "0" : bad)
		}' "$out" >>"$work/res-$t"
}

echo "compare — rentapi $built, wrk -t$threads -c$conns -d$duration --latency, $rounds rounds, $(nproc) cores (load generator included), $(go version | cut -d' ' -f3)"
n=${#targets[@]}
for ((r = 0; r < rounds; r++)); do
	shift=$((r * n / rounds))
	order=("${targets[@]:shift}" "${targets[@]:0:shift}")
	echo "round $((r + 1)): ${order[*]}" >&2
	for t in "${order[@]}"; do measure "$t" "$r"; done
done

# median FILE COLUMN: the median of a column over the rounds (the lower
# middle one when the rounds are even).
median() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bare_rps=$(median "$work/res-bare" 1)
printf '\n| target | req/s | p50 ms | p99 ms | × bare | non-2xx | req/s by round |\n|---|---|---|---|---|---|---|\n'
for t in "${targets[@]}"; do
	f="$work/res-$t"
	rps=$(median "$f" 1)
	printf '| %s | %.0f | %.2f | %.2f | %.3f | %s | %s |\n' "${label[$t]}" "$rps" "$(median "$f" 2)" "$(median "$f" 3)" \
		"$(awk -v a="$rps" -v b="$bare_rps" 'BEGIN {print a / b}')" \
		"$(awk '{$1 = $2 = $3 = ""; sub(/^ +/, ""); all = all sep $0; sep = "; "; if ($0 != "0") bad = 1} END {print bad ? all : 0}' "$f")" \
		"$(awk '{printf "%s%.0f", sep, $1; sep = " / "}' "$f")"
done

# At a fixed rate of half the maximum each engine answered (median), the
# latencies a server has when it is not saturated, and bare at the same
# rate: the tail ratio is the engine's p99 over bare's at that rate (issue
# 35 asks for at most 2). A p99 of one 10 s run is a few hundred requests,
# and one stall of the machine moves it, so each engine and bare take
# turns for ROUNDS rounds (which goes first alternating), each round's
# ratio is printed, and the medians of the engine's p99, bare's p99 and
# the ratios end the engine's lines. Then bare at half its own maximum:
# what the machine gives a server that does nothing but answer, when that
# server takes as much of it.
printf '\nGET /v1/bills?limit=20 at a fixed rate (half the req/s above) for %s, cycle pace, %s rounds:\n' "$duration" "$rounds"
p99() { grep -o 'p99 *[0-9.]*' <<<"$1" | awk '{print $2}'; }
paced_line() { "$cycle" -url "${url[$1]}" -key "${key[$1]:-}" -rate "$2" -duration "$duration" -c "$conns" pace; }
for engine in "${engines[@]}"; do
	rate=$(awk -v m="$(median "$work/res-get-$engine" 1)" 'BEGIN {printf "%.0f", m / 2}')
	: >"$work/tail-$engine"
	for ((r = 1; r <= rounds; r++)); do
		if ((r % 2)); then
			out=$(paced_line "$engine" "$rate") bare=$(paced_line bare "$rate")
		else
			bare=$(paced_line bare "$rate") out=$(paced_line "$engine" "$rate")
		fi
		printf 'round %d, %-9s %s\n' "$r" "$engine" "$out"
		printf 'round %d, %-9s %s\n' "$r" bare "$bare"
		awk -v e="$(p99 "$out")" -v b="$(p99 "$bare")" 'BEGIN {print e, b, e / b}' >>"$work/tail-$engine"
	done
	awk -v e="$(median "$work/tail-$engine" 1)" -v b="$(median "$work/tail-$engine" 2)" -v t="$(median "$work/tail-$engine" 3)" -v n="$engine" -v r="$rate" \
		-v all="$(awk '{printf "%s%.1f", sep, $3; sep = " / "}' "$work/tail-$engine")" \
		'BEGIN {printf "tail ratio, %-9s at %s req/s: medians p99 %.2f ms, bare %.2f ms; ratio %.1f (by round %s)\n", n, r, e, b, t, all}'
done
rate=$(awk -v m="$bare_rps" 'BEGIN {printf "%.0f", m / 2}')
printf 'fixed rate, %-9s %s\n' "bare at half its maximum" "$(paced_line bare "$rate")"

# Conditional GETs: the page at full speed with If-None-Match holding its
# current ETag (304, no body), against the plain 200 just before it, with
# the server's CPU per request (utime+stime from /proc) for each.
printf '\nGET /v1/bills?limit=20 at full speed, plain and with If-None-Match (%s each):\n' "$duration"
cpu_run() { # NAME HEADER...: "rate cpu-us" of one wrk run against NAME
	local name=$1 t0 t1 out
	shift
	t0=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	out=$(wrk -t"$threads" -c"$conns" -d"$duration" -H "Authorization: Bearer ${key[$name]}" "$@" "${url[$name]}/v1/bills?limit=20")
	t1=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n = $1} /^Requests\/sec:/ {rate = $2}
		END {printf "%.0f %.0f\n", rate, d / hz * 1e6 / n}' <<<"$out"
}
for engine in "${engines[@]}"; do
	tag=$(curl -fsS -D - -o /dev/null -H "Authorization: Bearer ${key[$engine]}" "${url[$engine]}/v1/bills?limit=20" |
		awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
	read -r r200 c200 <<<"$(cpu_run "$engine")"
	read -r r304 c304 <<<"$(cpu_run "$engine" -H "If-None-Match: $tag")"
	printf 'conditional, %-9s 200 %6s req/s %5s us cpu   304 %6s req/s %5s us cpu   304 ÷ 200 cpu %s\n' "$engine" "$r200" "$c200" "$r304" "$c304" \
		"$(awk -v a="$c304" -v b="$c200" 'BEGIN {printf "%.0f%%", 100 * a / b}')"
done

echo
echo "peak RSS (VmHWM):"
for name in "${engines[@]}" pocketbase bare; do
	[ -n "${pid[$name]:-}" ] || continue
	printf '  %-10s %s\n' "$name" "$(awk '/^VmHWM/ {printf "%.0f MB", $2 / 1024}' "/proc/${pid[$name]}/status")"
done

# The webhook burst (bench/webhooks.sh), which no change for the reads and
# writes above may slow by more than a tenth. WEBHOOKS=0 leaves it out.
if [ "${WEBHOOKS:-1}" = 1 ]; then
	echo
	SRC="$([ -n "${REV:-}" ] && [ -z "${RENTAPI_BIN:-}" ] && echo "$work/src" || echo .)" \
		BURST="${WEBHOOK_BURST:-10000}" RATE="${WEBHOOK_RATE:-200}" bench/webhooks.sh
fi
