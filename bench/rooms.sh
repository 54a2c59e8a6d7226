#!/usr/bin/env bash
# rooms.sh: adding rooms to a landlord who has many already (SQLite).
# Seeds a landlord with ROOMS rooms (cycle seed), then adds COUNT more with
# POST /v1/properties/{id}/rooms, one at a time over one connection, and
# prints the wall time and the server's CPU time (utime + stime from
# /proc) per room added. With SEED set (the path of a cycle binary) the
# landlord is seeded by it, for a rentapi of another schema. See
# bench/README.md.
#
#   bench/rooms.sh
#   ROOMS=20 bench/rooms.sh                              # the same on a small landlord
#   RENTAPI_BIN=/tmp/rentapi-old SEED=/tmp/cycle-old bench/rooms.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rooms="${ROOMS:-10000}"
count="${COUNT:-300}"
source bench/lib.sh
rentapi_binary
started rooms env RENTAPI_DB="sqlite:$work/rooms.db" RENTAPI_SECRET_FILE="$work/secret" "$work/rentapi" serve --addr 127.0.0.1:0 --rate-limits=false
k=$("${SEED:-$work/cycle}" -db "sqlite:$work/rooms.db" -secret-file "$work/secret" -bills "$rooms" -months 1 -landlords 1 seed 2>>"$work/seed.log")
prop=$(curl -sf -H "Authorization: Bearer $k" "${url[rooms]}/v1/properties?limit=1" | grep -o '"id":"prop_[a-z0-9]*"' | head -1 | cut -d'"' -f4)
# One curl, one connection: a request a block, "next" between them.
for i in $(seq "$count"); do
	[ "$i" = 1 ] || echo next
	printf 'url = "%s/v1/properties/%s/rooms"\ndata = "{\\"number\\":\\"New %d\\",\\"monthly_rent\\":350000}"\n' "${url[rooms]}" "$prop" "$i"
	printf 'header = "Content-Type: application/json"\nheader = "Authorization: Bearer %s"\noutput = /dev/null\nwrite-out = "%%{http_code}\\n"\n' "$k"
done >"$work/curl.cfg"
cpu() { awk '{print $14 + $15}' "/proc/${pid[rooms]}/stat"; }
c0=$(cpu)
t0=$(date +%s%N)
codes=$(curl -s -K "$work/curl.cfg" | sort | uniq -c | awk '{printf "%s %s  ", $2, $1}')
t1=$(date +%s%N)
c1=$(cpu)
echo "rentapi $rev, $count rooms added to a landlord of $rooms, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "status: $codes wall $(( (t1 - t0) / 1000 / count )) us a room, server cpu $(( (c1 - c0) * 10000 / count )) us a room"
