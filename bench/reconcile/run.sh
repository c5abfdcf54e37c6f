#!/usr/bin/env bash
# The reference design's acceptance check: N requests through the example
# app, the ledger rows they left, and the provider's own count of them.
# Starts its own fake provider (with the usage endpoints), docket collector
# (ledger + reconcile extension) and the example app on spare ports in a
# temporary directory, drives DEMO_REQUESTS requests (default 10,000), lets
# the extension pull and reconcile, prints its metrics, then stops the
# collector and runs `docket usage pull` and `docket reconcile`.
# REC_APP_DRAIN=30 waits before stopping the app (see below).
# REC_DROP=0.01 puts bench/dropproxy between the app and the collector,
# dropping that share of the app's spans on purpose (build it to bin/ first);
# REC_DROP_BY=trace drops whole traces instead of single spans.
# Run from the repository root after `make build` and the demo binaries.
set -euo pipefail
n="${DEMO_REQUESTS:-10000}"
export REC_DATA="$(mktemp -d)" REC_PROVIDER_PORT="${REC_PROVIDER_PORT:-18091}" REC_OTLP_PORT="${REC_OTLP_PORT:-14317}" REC_METRICS_PORT="${REC_METRICS_PORT:-18888}"
app_port="${REC_APP_PORT:-18090}"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$REC_DATA/admin.key"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
bin/fakeprovider -listen "127.0.0.1:$REC_PROVIDER_PORT" -admin-key-file "$REC_DATA/admin.key" > "$REC_DATA/fakeprovider.log" 2>&1 &
pids+=($!)
bin/docket collector --config bench/reconcile/collector.yaml > "$REC_DATA/docket.log" 2>&1 &
collector=$!
pids+=($collector)
for _ in $(seq 100); do curl -fsS "127.0.0.1:$REC_METRICS_PORT/metrics" >/dev/null 2>&1 && break; sleep 0.2; done
# The receiver opens after the metrics endpoint; spans sent before it are
# refused and, after the SDK's export timeout, lost.
for _ in $(seq 100); do (: > "/dev/tcp/127.0.0.1/$REC_OTLP_PORT") 2>/dev/null && break; sleep 0.2; done
otlp="127.0.0.1:$REC_OTLP_PORT"
if [ -n "${REC_DROP:-}" ]; then
  otlp="127.0.0.1:${REC_PROXY_PORT:-14318}"
  bin/dropproxy -listen "$otlp" -upstream "127.0.0.1:$REC_OTLP_PORT" -drop "$REC_DROP" -by "${REC_DROP_BY:-span}" > "$REC_DATA/dropproxy.log" 2>&1 &
  proxy=$!
  pids+=($proxy)
  for _ in $(seq 50); do (: > "/dev/tcp/${otlp/://}") 2>/dev/null && break; sleep 0.1; done
fi
bin/llmapp -listen "127.0.0.1:$app_port" -otlp-endpoint "$otlp" -provider-url "http://127.0.0.1:$REC_PROVIDER_PORT/v1" > "$REC_DATA/llmapp.log" 2>&1 &
app=$!
pids+=($app)
for _ in $(seq 50); do curl -s -o /dev/null "127.0.0.1:$app_port" && break; sleep 0.1; done
bin/loaddriver -n "$n" -c 8 -url "http://127.0.0.1:$app_port/ask"
# REC_APP_DRAIN seconds before the app stops: its SDK still holds spans it
# has not exported, and its shutdown flush has a deadline.
sleep "${REC_APP_DRAIN:-0}"
kill "$app"; wait "$app" 2>/dev/null || true
grep -h "spans not exported" "$REC_DATA/llmapp.log" || true
if [ -n "${proxy:-}" ]; then kill "$proxy"; wait "$proxy" 2>/dev/null || true; cat "$REC_DATA/dropproxy.log"; fi
echo "waiting for the ledger queue and the extension's next run (every minute)…"
sleep 75
curl -fsS "127.0.0.1:$REC_METRICS_PORT/metrics" | grep -E '^otelcol_(extension_reconcile|exporter_ledger_completeness)' || true
kill "$collector"; wait "$collector" 2>/dev/null || true
echo
OPENAI_ADMIN_KEY="$(cat "$REC_DATA/admin.key")" bin/docket usage pull --data "$REC_DATA" --actor run.sh --provider openai \
  --base-url "http://127.0.0.1:$REC_PROVIDER_PORT" --from "$(date -u +%F)"
bin/docket reconcile --data "$REC_DATA"
echo "data kept in $REC_DATA"
