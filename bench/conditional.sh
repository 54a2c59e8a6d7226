#!/usr/bin/env bash
# conditional.sh: what a conditional GET saves. rentapi on SQLite, seeded
# like compare.sh's; GET /v1/bills?limit=20 at full speed (wrk -t2 -c32)
# three ways, in turn ROUNDS times: a plain request to a server that makes
# every answer (--answer-cache off: 200, 12 KB), the same to a server that
# keeps answers by their tag (the default: after the first, each 200 is a
# kept answer), and with If-None-Match holding the page's current ETag
# (304, no body). Prints each run's rate and the server's CPU per request
# (utime+stime from /proc), then the medians and the 304's CPU as a share
# of each 200's (issue 35 asks for at most a third of the 200 it spares).
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
seeded made "$work/rentapi" RENTAPI_ANSWER_CACHE=off
page() { echo "${url[$1]}/v1/bills?limit=20"; }
auth() { echo "Authorization: Bearer ${key[$1]}"; }
tag=$(curl -fsS -D - -o /dev/null -H "$(auth rentapi)" "$(page rentapi)" | awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
code=$(curl -s -o "$work/second" -w "%{http_code}" -H "$(auth rentapi)" -H "If-None-Match: $tag" "$(page rentapi)")
[ "$code" = 304 ] || { echo "no 304 for $tag: $code $(head -c 300 "$work/second")" >&2; exit 1; }

# run ROW SERVER HEADER...: one wrk run; appends "rate cpu-us" to res-ROW.
run() {
	local row=$1 name=$2 t0 t1 out
	shift 2
	t0=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	out=$(wrk -t2 -c"$conns" -d"$duration" -H "$(auth "$name")" "$@" "$(page "$name")")
	t1=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	echo "$out" | awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '
		/requests in/ {n = $1} /^Requests\/sec:/ {rate = $2}
		END {printf "%.0f %.0f\n", rate, d / hz * 1e6 / n}' | tee -a "$work/res-$row"
}

echo "conditional — wrk -t2 -c$conns -d$duration, $rounds rounds, $(nproc) cores (wrk included), load $(cut -d' ' -f1 /proc/loadavg)"
for name in made rentapi; do wrk -t2 -c"$conns" -d2s -H "$(auth $name)" "$(page $name)" >/dev/null; done # warm-up, not counted
for r in $(seq "$rounds"); do
	echo -n "round $r 200 made: rate cpu-us "; run 200-made made
	echo -n "round $r 200 kept: rate cpu-us "; run 200-kept rentapi
	echo -n "round $r 304:      rate cpu-us "; run 304 rentapi -H "If-None-Match: $tag"
done
med() { awk -v c="$2" '{print $c}' "$work/res-$1" | median; }
printf '\n%-9s %10s %12s\n' answer req/s cpu-us/req
for s in 200-made 200-kept 304; do printf '%-9s %10s %12s\n' "$s" "$(med "$s" 1)" "$(med "$s" 2)"; done
for s in 200-made 200-kept; do
	awk -v a="$(med 304 2)" -v b="$(med $s 2)" -v s="$s" 'BEGIN {printf "a 304 costs %.0f%% of a %s CPU\n", 100 * a / b, s "'\''s"}'
done
