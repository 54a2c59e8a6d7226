#!/usr/bin/env bash
# conditional.sh: what a conditional GET saves. rentapi on SQLite, seeded
# like compare.sh's; GET /v1/bills?limit=20 at full speed (wrk -t2 -c32)
# as a plain request (200, 12 KB) and with If-None-Match holding the
# page's current ETag (304, no body), the two alternating ROUNDS times.
# Prints each run's rate and the server's CPU per request (utime+stime
# from /proc), then the medians and the 304's CPU as a share of the 200's
# (issue 35 asks for at most a third).
#
#   bench/conditional.sh
#   DURATION=8s ROUNDS=5 bench/conditional.sh
set -euo pipefail
duration="${DURATION:-6s}" rounds="${ROUNDS:-3}" conns="${CONNECTIONS:-32}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
# shellcheck source=bench/lib.sh
. bench/lib.sh
go build -o "$work/rentapi" ./cmd/rentapi
seeded rentapi "$work/rentapi"
page="${url[rentapi]}/v1/bills?limit=20"
auth="Authorization: Bearer ${key[rentapi]}"
tag=$(curl -fsS -D - -o /dev/null -H "$auth" "$page" | awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
code=$(curl -s -o "$work/second" -w "%{http_code}" -H "$auth" -H "If-None-Match: $tag" "$page")
[ "$code" = 304 ] || { echo "no 304 for $tag: $code $(head -c 300 "$work/second")" >&2; exit 1; }

# run STATUS HEADER...: one wrk run; appends "rate cpu-us" to res-STATUS.
run() {
	local status=$1 t0 t1 out
	shift
	t0=$(awk '{print $14 + $15}' "/proc/${pid[rentapi]}/stat")
	out=$(wrk -t2 -c"$conns" -d"$duration" -H "$auth" "$@" "$page")
	t1=$(awk '{print $14 + $15}' "/proc/${pid[rentapi]}/stat")
	echo "$out" | awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '
		/requests in/ {n = $1} /^Requests\/sec:/ {rate = $2}
		END {printf "%.0f %.0f\n", rate, d / hz * 1e6 / n}' | tee -a "$work/res-$status"
}

echo "conditional — wrk -t2 -c$conns -d$duration, $rounds rounds, $(nproc) cores (wrk included), load $(cut -d' ' -f1 /proc/loadavg)"
wrk -t2 -c"$conns" -d2s -H "$auth" "$page" >/dev/null # warm-up, not counted
for r in $(seq "$rounds"); do
	echo -n "round $r 200: rate cpu-us "; run 200
	echo -n "round $r 304: rate cpu-us "; run 304 -H "If-None-Match: $tag"
done
med() { awk -v c="$2" '{print $c}' "$work/res-$1" | median; }
printf '\n%-6s %10s %12s\n' status req/s cpu-us/req
for s in 200 304; do printf '%-6s %10s %12s\n' "$s" "$(med "$s" 1)" "$(med "$s" 2)"; done
awk -v a="$(med 304 2)" -v b="$(med 200 2)" 'BEGIN {printf "a 304 costs %.0f%% of a 200'\''s CPU\n", 100 * a / b}'
