#!/usr/bin/env bash
# Chat sends: notifications pushed per second to a fake LINE server on this machine, and
# the delay from a notification's commit to LINE taking it (p50, p99),
# on SQLite and (with RENTAPI_BENCH_POSTGRES) on PostgreSQL.
#
#   bench/chat.sh
#   RENTAPI_BENCH_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' bench/chat.sh
#   BURST=20000 RATE=100 bench/chat.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/chat" ./bench/chat
flags=(-burst "${BURST:-2000}" -rate "${RATE:-50}" -duration "${DURATION:-10s}" -workers "${WORKERS:-20}")

echo "chat sends — $(nproc) cores, $(go version | cut -d' ' -f3)"
echo "sqlite:"
"$work/chat" -db "sqlite:$work/chat.db" "${flags[@]}"
if [ -n "${RENTAPI_BENCH_POSTGRES:-}" ]; then
	schema="bench_$RANDOM$RANDOM"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
	sep='?'; [[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
	echo "postgres:"
	"$work/chat" -db "$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema" "${flags[@]}"
	psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $schema CASCADE" 2>/dev/null
fi
