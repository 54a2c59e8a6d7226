#!/usr/bin/env bash
# purge.sh: writes while the retention job purges expired Idempotency-Keys
# (SQLite). Seeds a landlord, stops the server, adds ROWS expired keys of
# 800 bytes each with the sqlite3 shell, serves the database again (the
# retention job runs at start) and at once loads POST /v1/meter-readings
# with wrk for DURATION. Prints the write rate, p99 and slowest write, and
# how many expired keys are left. See bench/README.md.
#
#   bench/purge.sh
#   ROWS=200000 DURATION=10s bench/purge.sh
#   RENTAPI_BIN=/tmp/rentapi bench/purge.sh     # a rentapi built elsewhere
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows="${ROWS:-200000}"
duration="${DURATION:-10s}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
command -v sqlite3 >/dev/null || apt-get install -y sqlite3 >/dev/null
source bench/lib.sh
rentapi_binary
db="$work/purge.db"
serve() { started "$1" env RENTAPI_DB="sqlite:$db" RENTAPI_SECRET_FILE="$work/secret" "$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false; }
serve seed
mapfile -t keys < <("$work/cycle" -db "sqlite:$db" -secret-file "$work/secret" -bills 200 -months 1 -landlords 1 seed 2>>"$work/seed.log")
kill "${pid[seed]}"
wait "${pid[seed]}" 2>/dev/null || true
unset "pid[seed]"
sqlite3 "$db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
	INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at, done, status_code, header, body)
	SELECT 'app_bench', 'acct_bench', 'expired-' || i, 'fp', 1, 1, 2, 1, 201, '{}', randomblob(800) FROM n"
serve writes
"$work/cycle" -url "${url[writes]}" lua "${keys[@]}" >"$work/writes.lua"
wrk -t2 -c32 -d"$duration" --latency -s bench/wrk.lua "${url[writes]}/v1/meter-readings" -- readings "$work/writes.lua" 0 2 "purge-$$" >"$work/wrk.txt"
left=$(sqlite3 "$db" "SELECT COUNT(*) FROM idempotency_keys WHERE expires_at <= 2")
echo "rentapi $rev, $rows expired keys purged at start, wrk -t2 -c32 -d$duration, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'writes %s req/s, p99 %s, slowest %s; expired keys left %s; %s\n' "$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")" \
	"$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")" "$(awk '$1 == "Latency" {print $4}' "$work/wrk.txt")" "$left" \
	"$(grep '^status' "$work/wrk.txt" | tr '\n' ' ')"
