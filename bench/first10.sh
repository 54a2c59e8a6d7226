#!/usr/bin/env bash
# A new developer's first minutes, timed: clone the repository, start the
# service (`go run ./cmd/rentapi serve`, with empty Go caches as on a fresh
# machine: every module downloaded, everything compiled), take the sandbox
# key it prints, start `rentapi listen` forwarding to a local receiver,
# make a first write, and see its event arrive. Prints each step's time.
#
#   bench/first10.sh [repository]     # default: this checkout
set -euo pipefail
repo="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOMODCACHE="$work/gomod" GOCACHE="$work/gocache" GOPATH="$work/gopath"
now() { date +%s.%N; }
step() { awk -v a="$(now)" -v b="$2" -v s="$1" 'BEGIN { printf "%-52s %6.1f s\n", s, a - b }'; }
wait_for() { # file pattern seconds
	for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; return 1
}
start=$(now)

t=$(now)
git clone -q "$repo" "$work/rentapi"
cd "$work/rentapi"
step "git clone" "$t"

t=$(now)
go run ./cmd/rentapi serve --addr 127.0.0.1:18080 >"$work/serve.log" 2>&1 &
wait_for "$work/serve.log" "sandbox test key" 900
key=$(sed -n 's/.*sandbox test key .*: \(svc_test_[A-Za-z0-9]*\).*/\1/p' "$work/serve.log")
step "go run ./cmd/rentapi serve (cold caches) → key" "$t"

t=$(now)
python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", 18081), H).serve_forever()' &
go run ./cmd/rentapi listen --api-key "$key" --api-base http://127.0.0.1:18080 --forward-to http://127.0.0.1:18081/hook >"$work/listen.log" 2>&1 &
wait_for "$work/listen.log" "ready: streaming" 300
step "go run ./cmd/rentapi listen → streaming" "$t"

t=$(now)
curl -sS -X POST http://127.0.0.1:18080/v1/properties -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	-H 'Idempotency-Key: first-property' -d '{"name":"Baan Suk Dormitory","electricity_rate":800,"water_rate":1800}' >/dev/null
wait_for "$work/listen.log" "property.created.*→ 200" 30
step "first write → its event at the receiver" "$t"
step "total: clone → first event seen" "$start"
