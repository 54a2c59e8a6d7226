#!/usr/bin/env bash
# split.sh: where the machine's CPU goes while it takes POST
# /v1/meter-readings at full speed: rentapi, the load generator (wrk), and
# the rest, which on PostgreSQL is the database itself. Each is per write,
# so a target rate can be set against it: at R writes a second, 2 cores
# give 2,000,000/R us to share.
#
#   bench/split.sh                                  # SQLite, one landlord
#   ENGINE=postgres RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/split.sh
#   ENGINE=postgres LANDLORDS=1 ... bench/split.sh  # one landlord's row lock
#
# The server is seeded like compare.sh's writes (LANDLORDS landlords of 200
# rooms of one month each; 20 on PostgreSQL, 1 on SQLite by default), and
# every round is `wrk -t2 -cCONNECTIONS -dDURATION` of new readings, each a
# 201 (anything else fails the run), after one round not counted (the
# database's connections and caches warm). The machine's busy time is
# /proc/stat's user, nice, system, irq, softirq and steal; rentapi's its
# utime+stime; wrk's its own as time(1) reports it; on PostgreSQL, the
# database's is what is left of the machine's (these counts disagree by a
# few per cent: on SQLite, rentapi's alone can exceed the machine's).
set -euo pipefail
duration="${DURATION:-10s}" rounds="${ROUNDS:-3}" conns="${CONNECTIONS:-32}"
landlords="${LANDLORDS:-$([ "${ENGINE:-sqlite}" = postgres ] && echo 20 || echo 1)}"
# shellcheck source=bench/lib.sh
. bench/lib.sh
command -v wrk >/dev/null || { echo "split.sh needs wrk (apt-get install -y wrk)" >&2; exit 1; }

rentapi_binary
seeded s "$work/rentapi"
mapfile -t writers < <("$work/cycle" -db "${database[s]}" -secret-file "$work/secret-s" -bills 200 -months 1 -landlords "$landlords" seed 2>>"$work/seed.log")
"$work/cycle" -url "${url[s]}" lua "${writers[@]}" >"$work/writes.lua"

busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
own() { awk '{print $14 + $15}' "/proc/${pid[s]}/stat"; }
months=0
echo "split — rentapi $rev, ${ENGINE:-sqlite}, $landlords landlord(s), wrk -t2 -c$conns -d$duration, $rounds rounds after one not counted, $(nproc) cores"
for ((r = 0; r <= rounds; r++)); do
	b0=$(busy) o0=$(own)
	out=$({ /usr/bin/time -f "wrk-cpu %U %S" wrk -t2 -c"$conns" -d"$duration" -s bench/wrk.lua "${url[s]}/v1/meter-readings" -- \
		readings "$work/writes.lua" "$months" 2 "$$-$r"; } 2>&1) || { echo "$out" >&2; exit 1; }
	b1=$(busy) o1=$(own)
	if ! awk '/^status / && $2 != 201 {bad = 1} /^status 201 / {ok = 1} /Socket errors:/ {bad = 1} END {exit bad || !ok}' <<<"$out"; then
		echo "writes were not all 201:" >&2
		echo "$out" >&2
		exit 1
	fi
	months=$((months + $(awk '/^months / {m = $2} END {print m + 0}' <<<"$out")))
	[ "$r" -eq 0 ] && continue
	awk -v hz="$(getconf CLK_TCK)" -v busy=$((b1 - b0)) -v own=$((o1 - o0)) -v r="$r" -v pg="$([ "${ENGINE:-sqlite}" = postgres ] && echo 1 || echo 0)" '
		/Requests\/sec/ {rps = $2}
		/^status 201/ {n = $3}
		/^wrk-cpu/ {wrk = ($2 + $3) * 1e6}
		END {
			us = 1e6 / hz / n
			printf "round %d: %.0f writes/s, the machine %.2f cores busy; per write: rentapi %.0f us, wrk %.0f us", r, rps, busy * us * rps / 1e6, own * us, wrk / n
			if (pg) printf ", PostgreSQL and the rest %.0f us", (busy - own) * us - wrk / n
			printf ", the machine %.0f us\n", busy * us
		}' <<<"$out"
done
