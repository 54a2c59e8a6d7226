#!/usr/bin/env bash
# Webhook delivery: deliveries per second to a receiver on this machine, and
# the delay from an event's commit to its first delivery attempt (p50, p99),
# on SQLite and (with RENTAPI_BENCH_POSTGRES) on PostgreSQL.
#
#   bench/webhooks.sh
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/webhooks.sh
#   BURST=20000 RATE=100 bench/webhooks.sh
#   SRC=/path/to/another/checkout bench/webhooks.sh   # that source's delivery
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "${SRC:-.}" && go build -o "$work/webhooks" ./bench/webhooks)
flags=(-burst "${BURST:-5000}" -rate "${RATE:-50}" -duration "${DURATION:-10s}" -workers "${WORKERS:-200}")

echo "webhook delivery — $(nproc) cores, $(go version | cut -d' ' -f3)"
echo "sqlite:"
"$work/webhooks" -db "sqlite:$work/webhooks.db" "${flags[@]}"
if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
	schema="bench_$RANDOM$RANDOM"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
	sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
	echo "postgres:"
	"$work/webhooks" -db "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema" "${flags[@]}"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null
fi
