#!/usr/bin/env bash
# testtime.sh: the README's test command on SQLite only, timed, with each
# package's own time, for comparing the suite's wall time between commits
# (issue 30). Give it checkouts of the commits; it warms each one's build
# cache, then runs them in turn, ROUNDS times, alternating.
#
#   git clone . /tmp/base && git -C /tmp/base checkout 10e9235
#   git clone . /tmp/head
#   bench/testtime.sh /tmp/base /tmp/head
set -euo pipefail
rounds="${ROUNDS:-2}"
unset RENTAPI_TEST_POSTGRES RENTAPI_TEST_REDIS
for dir in "$@"; do
	(cd "$dir" && go test -count=1 -run '^$' ./... >/dev/null)
done
for r in $(seq "$rounds"); do
	for dir in "$@"; do
		start=$(date +%s.%N)
		out=$(cd "$dir" && go test -count=1 ./... 2>&1) || { echo "$out"; exit 1; }
		end=$(date +%s.%N)
		printf '%s round %d (%s): %.1f s, load %s\n' "$dir" "$r" "$(git -C "$dir" rev-parse --short HEAD)" "$(echo "$end - $start" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
		echo "$out" | awk '$1 == "ok" || $1 == "FAIL" {print "    " $2, $3}'
	done
done
