#!/usr/bin/env bash
# split.sh: where the machine's CPU goes while it takes POST
# /v1/meter-readings at full speed: rentapi, the load generator (wrk),
# PostgreSQL's processes, and the rest of the machine. Each is per write,
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
# database's connections and caches warm). rentapi's CPU is its
# utime+stime, PostgreSQL's the sum of its processes' (`pgrep -x
# postgres`, on this machine; the pool's backends live through the run),
# wrk's as time(1) reports it. The machine's is /proc/stat's user, nice,
# system, irq and softirq; steal (time the hypervisor gave to others) is
# printed apart. The rest is the machine's less the three: other
# processes, and the disagreement of the kernel's two counts (a few per
# cent; on SQLite, rentapi's alone can exceed the machine's).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${DURATION:-10s}" rounds="${ROUNDS:-3}" conns="${CONNECTIONS:-32}"
landlords="${LANDLORDS:-$([ "${ENGINE:-sqlite}" = postgres ] && echo 20 || echo 1)}"
for tool in wrk /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "split.sh needs $tool (apt-get install -y wrk time)" >&2; exit 1; }
done
# shellcheck source=bench/lib.sh
. bench/lib.sh

rentapi_binary
seeded s "$work/rentapi"
keys=$("$work/cycle" -db "${database[s]}" -secret-file "$work/secret-s" -bills 200 -months 1 -landlords "$landlords" seed 2>>"$work/seed.log") ||
	{ cat "$work/seed.log" >&2; exit 1; }
mapfile -t writers <<<"$keys"
"$work/cycle" -url "${url[s]}" lua "${writers[@]}" >"$work/writes.lua"

# Tick counts, printed whole (mawk would print a large sum as 2.1e+09).
busy() { awk '/^cpu / {printf "%.0f\n", $2 + $3 + $4 + $7 + $8}' /proc/stat; }
steal() { awk '/^cpu / {printf "%.0f\n", $9}' /proc/stat; }
own() { awk '{printf "%.0f\n", $14 + $15}' "/proc/${pid[s]}/stat"; }
# postgres FILE: PostgreSQL's processes, each as "PID ticks", into FILE;
# postgres_since BEFORE AFTER: their ticks between the two, each process
# counted from BEFORE (or whole, if it began since; one that ended since
# is not counted).
postgres() {
	local p
	for p in $(pgrep -x postgres); do cat "/proc/$p/stat" 2>/dev/null || true; done | awk '{printf "%s %.0f\n", $1, $14 + $15}' >"$1"
}
postgres_since() { awk 'NR == FNR {t0[$1] = $2; next} {t += $2 - t0[$1]} END {printf "%.0f\n", t}' "$1" "$2"; }
months=0
echo "split — rentapi $rev, ${ENGINE:-sqlite}, $landlords landlord(s), wrk -t2 -c$conns -d$duration, $rounds rounds after one not counted, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r <= rounds; r++)); do
	b0=$(busy) s0=$(steal) o0=$(own)
	postgres "$work/pg0"
	out=$({ /usr/bin/time -f "wrk-cpu %U %S %e" wrk -t2 -c"$conns" -d"$duration" -s bench/wrk.lua "${url[s]}/v1/meter-readings" -- \
		readings "$work/writes.lua" "$months" 2 "$$-$r"; } 2>&1) || { echo "$out" >&2; exit 1; }
	b1=$(busy) s1=$(steal) o1=$(own)
	postgres "$work/pg1"
	if ! awk '/^status / && $2 != 201 {bad = 1} /^status 201 / {ok = 1} /Socket errors:/ {bad = 1} END {exit bad || !ok}' <<<"$out"; then
		echo "writes were not all 201:" >&2
		echo "$out" >&2
		exit 1
	fi
	months=$((months + $(awk '/^months / {m = $2} END {print m + 0}' <<<"$out")))
	[ "$r" -eq 0 ] && continue
	awk -v hz="$(getconf CLK_TCK)" -v busy=$((b1 - b0)) -v steal=$((s1 - s0)) -v own=$((o1 - o0)) -v pg="$(postgres_since "$work/pg0" "$work/pg1")" -v r="$r" '
		/Requests\/sec/ {rps = $2}
		/^status 201/ {n = $3}
		/^wrk-cpu/ {wrk = ($2 + $3) * 1e6; wall = $4}
		END {
			us = 1e6 / hz / n
			printf "round %d: %.0f writes/s, %.2f cores busy (steal %.2f); per write: rentapi %.0f us, wrk %.0f us",
				r, rps, busy / hz / wall, steal / hz / wall, own * us, wrk / n
			if (pg > 0) printf ", PostgreSQL %.0f us", pg * us
			printf ", the rest %.0f us, the machine %.0f us\n", (busy - own - pg) * us - wrk / n, busy * us
		}' <<<"$out"
done
