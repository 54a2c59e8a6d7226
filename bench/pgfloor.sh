#!/usr/bin/env bash
# pgfloor.sh: what PostgreSQL alone does on this machine with the
# statements of a write. pgbench sends those of one POST
# /v1/meter-readings (bench/pgfloor.sql: the same statements in the same
# two pipelined round trips) with no rentapi in the way, over the 20
# landlords of compare.sh's write row and over one landlord, at several
# client counts. A write target for rentapi on PostgreSQL above these rates
# is not one the service's code can meet on this machine.
#
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/pgfloor.sh
#   CLIENTS="1 2 4 10" DURATION=8 ROUNDS=5 RENTAPI_BENCH_POSTGRES=... bench/pgfloor.sh
#   SQL=bench/pgfloor-least.sql RENTAPI_BENCH_POSTGRES=... bench/pgfloor.sh   # no write can do less
#
# A schema is seeded as compare.sh's (20 landlords of 200 rooms of one
# month each, by bench/cycle through a rentapi that is then stopped, so
# that the cores are PostgreSQL's and pgbench's alone). Each run is
# `pgbench -M prepared -j 2 -c CLIENTS -T DURATION`, after a VACUUM of the
# landlords table (whose row of each landlord every write updates) and a
# CHECKPOINT; rows rotate between rounds, and the table gives each row's
# median transactions a second, and the machine's CPU a transaction
# (/proc/stat's user, nice, system, irq and softirq over the run), of which
# pgbench's (time(1)); the rest is PostgreSQL's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${RENTAPI_BENCH_POSTGRES:?pgfloor.sh needs RENTAPI_BENCH_POSTGRES}"
clients="${CLIENTS:-1 2 4 10 32}" script="${SQL:-bench/pgfloor.sql}" duration="${DURATION:-10}" rounds="${ROUNDS:-3}"
for tool in pgbench psql /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "pgfloor.sh needs $tool" >&2; exit 1; }
done
# shellcheck source=bench/lib.sh
export ENGINE=postgres
. bench/lib.sh

rentapi_binary
seeded s "$work/rentapi"
"$work/cycle" -db "${database[s]}" -secret-file "$work/secret-s" -bills 200 -months 1 -landlords 20 seed >/dev/null 2>>"$work/seed.log" ||
	{ cat "$work/seed.log" >&2; exit 1; }
kill "${pid[s]}"
wait "${pid[s]}" 2>/dev/null || true
schema=${schemas[-1]}
sql() { PGOPTIONS="-c search_path=$schema -c client_min_messages=warning" psql -qAtX -v ON_ERROR_STOP=1 "$RENTAPI_BENCH_POSTGRES" "$@"; }
# bench_map: a number for each room of the 20 landlords (1 to 200 are the
# first landlord's), with the ids a write of it names.
sql -c "CREATE TABLE bench_map AS SELECT (row_number() OVER (ORDER BY l.id, r.id))::int AS k,
		l.id AS lid, r.id AS rid, r.property_id AS pid, a.id AS aid, a.application_id AS app
	FROM landlords l JOIN accounts a ON a.landlord_id = l.id JOIN rooms r ON r.landlord_id = l.id
	WHERE (SELECT count(*) FROM rooms x WHERE x.landlord_id = l.id) = 200" \
	-c "ALTER TABLE bench_map ADD PRIMARY KEY (k)"
[ "$(sql -c 'SELECT count(*) FROM bench_map')" = 4000 ] || { echo "pgfloor.sh: the seed is not 20 landlords of 200 rooms" >&2; exit 1; }
access=$(sql -c 'SELECT version FROM access_version')
# The values the service writes for a reading: the event's data and the
# sealed answer kept under the key, of their usual sizes.
data='{"id":"mrd_uvkr2wpf1ub9opfwi7i7h9s2","object":"meter_reading","room_id":"room_ei0qetap59dwl75eszf2qvq1","property_id":"prop_8pz3q9f9n8k623t86zl0fq1i","month":"2027-01","currency":"THB","electricity":{"previous":120.5,"current":99999,"usage":99878.5,"rate":800,"rollover":false},"water":{"previous":5,"current":9999,"usage":9994,"rate":1800,"rollover":false,"billing":"metered","flat_amount":null},"flags":[],"bill_id":null,"created_at":"2026-11-29T23:47:54Z","updated_at":"2026-11-29T23:47:54Z"}'
body="\\x$(head -c 330 /dev/urandom | od -An -tx1 | tr -d ' \n')"

busy() { awk '/^cpu / {printf "%.0f\n", $2 + $3 + $4 + $7 + $8}' /proc/stat; }
# row NAME CLIENTS HI ROUND: one pgbench run over rooms 1 to HI; appends
# "tps cpu-us pgbench-us" to res-NAME.
row() {
	local name=$1 c=$2 hi=$3 b0 b1 out run
	run=$(date +%s%N) # new ids in every run
	sql -c "VACUUM landlords" -c CHECKPOINT
	b0=$(busy)
	out=$({ PGOPTIONS="-c search_path=$schema" /usr/bin/time -f "pgbench-cpu %U %S" pgbench -n -M prepared -j 2 -c "$c" -T "$duration" \
		-f "$script" -D n=0 -D lo=1 -D hi="$hi" -D run="$run" -D access="$access" -D data="$data" -D body="$body" \
		-D 'hdr={"Content-Type":"application/json","Retry-After":""}' "$RENTAPI_BENCH_POSTGRES"; } 2>&1) || { echo "$out" >&2; exit 1; }
	b1=$(busy)
	if grep -q 'error' <<<"$out"; then echo "$out" >&2; exit 1; fi
	awk -v hz="$(getconf CLK_TCK)" -v d=$((b1 - b0)) -v name="$name" -v r="$4" '
		/^number of transactions actually processed/ {split($NF, t, "/"); n = t[1]}
		/^tps = / {tps = $3}
		/^pgbench-cpu/ {own = $2 + $3}
		END {printf "%.0f %.0f %.0f\n", tps, d / hz * 1e6 / n, own * 1e6 / n}' <<<"$out" |
		tee -a "$work/res-$name" | sed "s/^/round $4 $name: tps cpu-us pgbench-us /"
}

echo "pgfloor — $script, PostgreSQL $(sql -c 'SHOW server_version'), pgbench -M prepared -j 2 -T $duration, clients $clients, $rounds rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for c in $clients; do rows+=("20-landlords-c$c" "1-landlord-c$c"); done
n=${#rows[@]}
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < n; i++)); do
		name=${rows[$(((i + r * n / rounds) % n))]}
		c=${name##*-c} hi=4000
		[[ $name == 1-landlord-* ]] && hi=200
		row "$name" "$c" "$hi" $((r + 1))
	done
done

printf '\n%-20s %10s %16s %14s\n' row writes/s cpu-us/write of-pgbench-us
for name in "${rows[@]}"; do
	col() { awk -v c="$1" '{print $c}' "$work/res-$name" | median; }
	printf '%-20s %10s %16s %14s\n' "$name" "$(col 1)" "$(col 2)" "$(col 3)"
done
