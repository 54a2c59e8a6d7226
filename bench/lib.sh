# lib.sh: what ab.sh, floor.sh, purge.sh, rooms.sh and split.sh share, sourced from
# the repository's root: a scratch directory removed on exit with the
# servers started in it, cycle built there, the rentapi to measure, a
# server started and its address, rentapi on a
# seeded database (SQLite, or a PostgreSQL schema of its own with
# ENGINE=postgres), a paced run with the server's CPU per request, and a
# median.
work=$(mktemp -d)
declare -A pid url key database seeder
schemas=()
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for s in "${schemas[@]}"; do
		PGOPTIONS='-c client_min_messages=warning' psql -q "$RENTAPI_BENCH_POSTGRES" -c "DROP SCHEMA $s CASCADE" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/cycle" ./bench/cycle

# rentapi_binary: $work/rentapi is RENTAPI_BIN when set, else built from
# the working tree; rev says which.
rentapi_binary() {
	if [ -n "${RENTAPI_BIN:-}" ]; then
		cp "$RENTAPI_BIN" "$work/rentapi"
		rev="$RENTAPI_BIN"
	else
		go build -o "$work/rentapi" ./cmd/rentapi
		rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- cmd internal || echo '+changes')"
	fi
}

# started NAME COMMAND...: runs a server, waits for its address, url[NAME].
started() {
	local name=$1
	shift
	"$@" >"$work/$name.out" 2>"$work/$name.log" &
	pid[$name]=$!
	for _ in $(seq 100); do grep -q 'listening on' "$work/$name.out" && break; sleep 0.1; done
	url[$name]=$(grep -o 'http://[0-9.:]*' "$work/$name.out" | tail -1)
	[ -n "${url[$name]}" ] || { echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
}

# seeded NAME RENTAPI [NAME=value...]: that rentapi binary serving a new
# database with the per-second limits off (in the environment given),
# seeded like compare.sh's with 1,000 bills by seeder[NAME] (a cycle built
# from that rentapi's commit, whose tables it writes), or $work/cycle if
# unset; key[NAME] is the landlord's
# live key, and database[NAME] its DSN: a SQLite file, or with
# ENGINE=postgres a new schema of RENTAPI_BENCH_POSTGRES, dropped on exit.
seeded() {
	local name=$1 bin=$2
	local dsn="sqlite:$work/$name.db"
	shift 2
	if [ "${ENGINE:-sqlite}" = postgres ]; then
		: "${RENTAPI_BENCH_POSTGRES:?ENGINE=postgres needs RENTAPI_BENCH_POSTGRES}"
		local schema="bench_${name}_$RANDOM$RANDOM" sep='?'
		psql -q "$RENTAPI_BENCH_POSTGRES" -c "CREATE SCHEMA $schema"
		schemas+=("$schema")
		[[ "$RENTAPI_BENCH_POSTGRES" == *\?* ]] && sep='&'
		dsn="$RENTAPI_BENCH_POSTGRES${sep}search_path=$schema"
	fi
	started "$name" env "$@" RENTAPI_DB="$dsn" RENTAPI_SECRET_FILE="$work/secret-$name" \
		"$bin" serve --addr 127.0.0.1:0 --rate-limits=false
	database[$name]=$dsn
	key[$name]=$("${seeder[$name]:-$work/cycle}" -db "$dsn" -secret-file "$work/secret-$name" -bills 1000 seed 2>>"$work/seed.log")
}

# paced NAME RATE DURATION: GET /v1/bills?limit=20 from NAME at RATE over
# $conns connections; prints cycle pace's line and "cpu/request N us", the
# server's utime+stime (/proc/PID/stat) over the requests paced.
paced() {
	local name=$1 t0 t1 out
	t0=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	out=$("$work/cycle" -url "${url[$name]}" -key "${key[$name]:-}" -rate "$2" -duration "$3" -c "$conns" pace)
	t1=$(awk '{print $14 + $15}' "/proc/${pid[$name]}/stat")
	awk -v out="$out" -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
		match(out, /\([0-9]+ requests/)
		n = substr(out, RSTART + 1, RLENGTH - 10)
		printf "%s cpu/request %.0f us\n", out, d / hz * 1e6 / n
	}'
}

# median: the middle of the numbers on stdin, one a line (the lower one of
# an even count).
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
