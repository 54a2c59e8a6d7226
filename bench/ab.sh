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
#   MODE=writes A=main~1 bench/ab.sh     # POST /v1/meter-readings at full speed instead
#
# MODE=writes gives each server LANDLORDS landlords (1 by default) of 200
# rooms (as compare.sh's write rows do) and each round `wrk -t2
# -cCONNECTIONS` of new readings over DURATION, every one a 201 (anything
# else fails the run), with the server's CPU per write.
#
# Each server is seeded like compare.sh's (1,000 bills), by bench/cycle
# built from its own commit (an older commit's tables are not this one's),
# and warmed for 2 s.
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
	(cd "$work/src-$side" && go build -o "$work/rentapi-$side" ./cmd/rentapi && go build -o "$work/cycle-$side" ./bench/cycle)
	seeder[$side]=$work/cycle-$side
	env_var=${side^^}_ENV
	# shellcheck disable=SC2086 # A_ENV and B_ENV are lists of NAME=value words
	seeded "$side" "$work/rentapi-$side" ${!env_var:-}
	paced "$side" "$rate" 2s >/dev/null
	if [ "${MODE:-reads}" = writes ]; then
		mapfile -t writers < <("${seeder[$side]}" -db "${database[$side]}" -secret-file "$work/secret-$side" -bills 200 -months 1 \
			-landlords "${LANDLORDS:-1}" seed 2>>"$work/seed.log")
		"$work/cycle" -url "${url[$side]}" lua "${writers[@]}" >"$work/writes-$side.lua"
	fi
done

# written SIDE ROUND: one wrk run of new readings on SIDE; prints its rate,
# p99 and the server's CPU per write, and moves months[SIDE] on.
declare -A months
written() {
	local side=$1 t0 t1 out
	t0=$(awk '{print $14 + $15}' "/proc/${pid[$side]}/stat")
	out=$(wrk -t2 -c"$conns" -d"$duration" --latency -s bench/wrk.lua "${url[$side]}/v1/meter-readings" -- \
		readings "$work/writes-$side.lua" "${months[$side]:-0}" 2 "$$-$side-$2" 2>&1) || {
		echo "wrk failed on $side:" >&2
		echo "$out" >&2
		exit 1
	}
	t1=$(awk '{print $14 + $15}' "/proc/${pid[$side]}/stat")
	# Every request a 201: none answered otherwise, none lost to the socket.
	if ! awk '/^status / && $2 != 201 {bad = 1} /^status 201 / {ok = 1} /Socket errors:/ {bad = 1} END {exit bad || !ok}' <<<"$out"; then
		echo "writes to $side were not all 201:" >&2
		echo "$out" >&2
		exit 1
	fi
	months[$side]=$(( ${months[$side]:-0} + $(awk '/^months / {m = $2} END {print m + 0}' <<<"$out") ))
	awk -v hz="$(getconf CLK_TCK)" -v d=$((t1 - t0)) '
		/Requests\/sec/ {rps = $2}
		$1 == "99%" {p99 = $2}
		/^status 201/ {n = $3}
		END {printf "%.0f writes/s p99 %s cpu/write %.0f us\n", rps, p99, d / hz * 1e6 / n}' <<<"$out"
}

if [ "${MODE:-reads}" = writes ]; then
	echo "ab writes — ${ENGINE:-sqlite}, ${LANDLORDS:-1} landlord(s), A $(git rev-parse --short "$a") ($a) ${A_ENV:-}, B $(git rev-parse --short "$b") ($b) ${B_ENV:-}, wrk -t2 -c$conns -d$duration, $rounds rounds, $(nproc) cores"
	for ((r = 1; r <= rounds; r++)); do
		for side in a b; do
			written "$side" "$r" >"$work/round" # not in a subshell: it moves months on
			echo "round $r ${side^^}: $(cat "$work/round")" | tee -a "$work/res-$side"
		done
	done
	for side in a b; do
		printf '%s median: %s writes/s, CPU %s us a write; peak RSS %s MB\n' "${side^^}" \
			"$(awk '{print $4}' "$work/res-$side" | median)" \
			"$(awk '{print $(NF - 1)}' "$work/res-$side" | median)" \
			"$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${pid[$side]}/status")"
	done
	exit 0
fi

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
