#!/usr/bin/env bash
# ab.sh: two builds of rentapi side by side on SQLite (or PostgreSQL,
# ENGINE=postgres with RENTAPI_BENCH_POSTGRES), GET /v1/bills?limit=20
# paced at one fixed rate, the rounds alternating between them, with each
# server's CPU per request: a change measured against its baseline in the
# same minutes, which a noisy machine's separate runs cannot give.
#
#   A=5189809 B=HEAD bench/ab.sh
#   RATE=3000 DURATION=8s ROUNDS=8 A=main~3 bench/ab.sh
#   A=HEAD B=HEAD B_ENV='GOGC=200' bench/ab.sh   # one build, two settings
#   ENGINE=postgres RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' A=main~5 bench/ab.sh
#
# Each server is seeded like compare.sh's (1,000 bills) and warmed for 2 s.
# CPU per request is the server's utime+stime (/proc/PID/stat) over the
# requests of the round.
set -euo pipefail
a="${A:?A=REV (the baseline)}" b="${B:-HEAD}"
rate="${RATE:-3000}" duration="${DURATION:-8s}" rounds="${ROUNDS:-8}" conns="${CONNECTIONS:-32}"
# shellcheck source=bench/lib.sh
. bench/lib.sh

for side in a b; do
	rev=${!side}
	mkdir "$work/src-$side"
	git archive "$rev" | tar -x -C "$work/src-$side"
	(cd "$work/src-$side" && go build -o "$work/rentapi-$side" ./cmd/rentapi)
	env_var=${side^^}_ENV
	# shellcheck disable=SC2086 # A_ENV and B_ENV are lists of NAME=value words
	seeded "$side" "$work/rentapi-$side" ${!env_var:-}
	paced "$side" "$rate" 2s >/dev/null
done

echo "ab — ${ENGINE:-sqlite}, A $(git rev-parse --short "$a") ($a) ${A_ENV:-}, B $(git rev-parse --short "$b") ($b) ${B_ENV:-}, $rate req/s for $duration, $rounds rounds, $(nproc) cores"
for ((r = 1; r <= rounds; r++)); do
	for side in a b; do
		echo "round $r ${side^^}: $(paced "$side" "$rate" "$duration")" | tee -a "$work/res-$side"
	done
done
for side in a b; do
	printf '%s median: p99 %s ms, CPU %s us a request; peak RSS %s MB\n' "${side^^}" \
		"$(awk '{for (i = 1; i <= NF; i++) if ($i == "p99") print $(i + 1)}' "$work/res-$side" | median)" \
		"$(awk '{print $(NF - 1)}' "$work/res-$side" | median)" \
		"$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${pid[$side]}/status")"
done
