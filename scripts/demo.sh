#!/usr/bin/env bash
# Runs the example LLM application against a running `docket dev` and drives
# load through it, then shows the evidence of one request.
set -euo pipefail
n="${DEMO_REQUESTS:-500}"
api="http://127.0.0.1:8080"
if ! curl -fsS "$api/healthz" >/dev/null 2>&1; then
  echo "demo: docket dev is not running; start it with 'make run' in another terminal" >&2
  exit 1
fi
mkdir -p data
bin/llmapp -listen 127.0.0.1:8090 > data/llmapp.log 2>&1 &
app=$!
trap 'kill $app 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -s -o /dev/null 127.0.0.1:8090 && break
  sleep 0.1
done
bin/loaddriver -n "$n" -c 8 -url http://127.0.0.1:8090/ask -trace-ids data/demo-trace-ids.txt
kill "$app"; wait "$app" 2>/dev/null || true
trap - EXIT
sleep 6 # the app's batch span processor flushed at exit; the ledger queue flushes within 5 s
id=$(head -n 1 data/demo-trace-ids.txt)
echo
echo "$(wc -l < data/demo-trace-ids.txt) requests sent; their trace IDs are in data/demo-trace-ids.txt."
echo "Open the evidence of the first one (sign in as admin with the password 'make run' printed):"
echo "  $api/complaints/$id"
echo "Every call:  $api/ledger      Costs:  $api/costs"
