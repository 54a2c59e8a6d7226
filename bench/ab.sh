#!/usr/bin/env bash
# ab.sh: two builds of rentapi side by side on SQLite, GET /v1/bills?limit=20
# paced at one fixed rate, the rounds alternating between them, with each
# server's CPU per request: a change measured against its baseline in the
# same minutes, which a noisy machine's separate runs cannot give.
#
#   A=5189809 B=HEAD bench/ab.sh
#   RATE=3000 DURATION=8s ROUNDS=8 A=main~3 bench/ab.sh
#   A=HEAD B=HEAD B_ENV='GOGC=200' bench/ab.sh   # one build, two settings
#
# Each server is seeded like compare.sh's (1,000 bills) and warmed for 2 s.
# CPU per request is the server's utime+stime (/proc/PID/stat) over the
# requests of the round.
set -euo pipefail
a="${A:?A=REV (the baseline)}" b="${B:-HEAD}"
rate="${RATE:-3000}" duration="${DURATION:-8s}" rounds="${ROUNDS:-8}" conns="${CONNECTIONS:-32}"
work=$(mktemp -d)
declare -A pid url key
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/cycle" ./bench/cycle
for side in a b; do
	rev=${!side}
	mkdir "$work/src-$side"
	git archive "$rev" | tar -x -C "$work/src-$side"
	(cd "$work/src-$side" && go build -o "$work/rentapi-$side" ./cmd/rentapi)
	env_var=${side^^}_ENV
	# shellcheck disable=SC2086 # A_ENV and B_ENV are lists of NAME=value words
	env ${!env_var:-} RENTAPI_DB="sqlite:$work/$side.db" RENTAPI_SECRET_FILE="$work/secret-$side" \
		"$work/rentapi-$side" serve --addr 127.0.0.1:0 --rate-limits=false >"$work/$side.out" 2>"$work/$side.log" &
	pid[$side]=$!
	for _ in $(seq 100); do grep -q 'listening on' "$work/$side.out" && break; sleep 0.1; done
	url[$side]=$(grep -o 'http://[0-9.:]*' "$work/$side.out" | tail -1)
	key[$side]=$("$work/cycle" -db "sqlite:$work/$side.db" -secret-file "$work/secret-$side" -bills 1000 seed 2>>"$work/seed.log")
	"$work/cycle" -url "${url[$side]}" -key "${key[$side]}" -rate "$rate" -duration 2s -c "$conns" pace >/dev/null
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)
echo "ab — A $(git rev-parse --short "$a") ($a) ${A_ENV:-}, B $(git rev-parse --short "$b") ($b) ${B_ENV:-}, $rate req/s for $duration, $rounds rounds, $(nproc) cores"
for ((r = 1; r <= rounds; r++)); do
	for side in a b; do
		t0=$(cpu "${pid[$side]}")
		out=$("$work/cycle" -url "${url[$side]}" -key "${key[$side]}" -rate "$rate" -duration "$duration" -c "$conns" pace)
		t1=$(cpu "${pid[$side]}")
		n=$(grep -o '([0-9]* requests' <<<"$out" | tr -dc 0-9)
		us=$(awk -v d=$((t1 - t0)) -v n="$n" -v hz="$tick" 'BEGIN {printf "%.0f", d / hz * 1e6 / n}')
		echo "round $r ${side^^}: $out cpu/request $us us" | tee -a "$work/res-$side"
	done
done
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for side in a b; do
	printf '%s median: p99 %s ms, CPU %s us a request; peak RSS %s MB\n' "${side^^}" \
		"$(awk '{for (i = 1; i <= NF; i++) if ($i == "p99") print $(i + 1)}' "$work/res-$side" | median)" \
		"$(awk '{print $(NF - 1)}' "$work/res-$side" | median)" \
		"$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${pid[$side]}/status")"
done
