#!/usr/bin/env bash
# Staged rollout of a new gateway config: validate it, put it on one
# gateway (the canary), watch that gateway beside the others for a while,
# then roll it out to the rest or put the old config back.
#
#   canary.sh NEW_CONFIG
#
# How a config reaches a gateway is yours (kubectl, helm, systemd, …); the
# script runs your commands:
#   CANARY_APPLY     puts NEW_CONFIG ($1) on the canary gateway and restarts it,
#                    returning once the old process is gone
#   CANARY_ROLLBACK  puts the previous config back on the canary and restarts it
#   CANARY_PROCEED   rolls NEW_CONFIG ($1) out to the other gateways
# and reads the gateways' Prometheus endpoints (service.telemetry.metrics):
#   CANARY_METRICS   the canary's, e.g. http://gateway-0:8888/metrics
#   OTHERS_METRICS   the other gateways', separated by spaces
# Optional:
#   DOCKET_BIN            the docket command (default: docket)
#   CANARY_WARMUP         seconds the restarted canary may take to receive its first span (default 120)
#   CANARY_SOAK           seconds to watch once it does (default 300)
#   CANARY_SETTLE         seconds a received span may take to be written (default 5)
#   CANARY_MIN_SPANS      spans the canary must receive while watched (default 1)
#   CANARY_MAX_ERROR_DELTA        (default 0.01)
#   CANARY_MAX_COMPLETENESS_DROP  (default 0.01)
#
# The decision, over the watch window (counters are differences, so the
# gateways' history does not count):
#   spans in       otelcol_receiver_{accepted,refused,failed}_spans
#   error rate     the larger of receiver refused + failed spans and exporter
#                  send_failed spans, over spans in (a span an exporter fails is
#                  refused at the receiver too)
#   completeness   otelcol_exporter_ledger_completeness_spans{stage="written"} / {stage="received"},
#                  written counted CANARY_SETTLE seconds later (at most 1)
# Roll back when the canary takes no traffic within CANARY_WARMUP, or
# received fewer than CANARY_MIN_SPANS spans while the others received some, when its error rate exceeds the others' by
# more than CANARY_MAX_ERROR_DELTA, or when its completeness is more than
# CANARY_MAX_COMPLETENESS_DROP below theirs. Otherwise proceed.
#
# Exit status: 0 proceeded, 1 rolled back, 2 NEW_CONFIG is invalid (nothing
# changed), 3 a command or endpoint failed.
set -euo pipefail

new=${1:?usage: canary.sh NEW_CONFIG}
docket=${DOCKET_BIN:-docket}
soak=${CANARY_SOAK:-300}
settle=${CANARY_SETTLE:-5}
warmup=${CANARY_WARMUP:-120}
min_spans=${CANARY_MIN_SPANS:-1}
max_error_delta=${CANARY_MAX_ERROR_DELTA:-0.01}
max_completeness_drop=${CANARY_MAX_COMPLETENESS_DROP:-0.01}
: "${CANARY_APPLY:?}" "${CANARY_ROLLBACK:?}" "${CANARY_PROCEED:?}" "${CANARY_METRICS:?}" "${OTHERS_METRICS:?}"

say() { echo "canary: $*"; }

# counters URL... prints "in refused send_failed received written", summed
# over the URLs.
counters() {
	local url
	for url in "$@"; do
		curl -fsS --max-time 10 "$url" || return 1
	done | awk '
		/^#/ { next }
		{
			match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/); name = substr($0, 1, RLENGTH); sub(/_total$/, "", name); v = $NF
		}
		name == "otelcol_receiver_accepted_spans" { in_ += v }
		name == "otelcol_receiver_refused_spans" || name == "otelcol_receiver_failed_spans" { in_ += v; ref += v }
		name == "otelcol_exporter_send_failed_spans" { sf += v }
		name == "otelcol_exporter_ledger_completeness_spans" && /stage="received"/ { rec += v }
		name == "otelcol_exporter_ledger_completeness_spans" && /stage="written"/ { wr += v }
		END { printf "%d %d %d %d %d\n", in_, ref, sf, rec, wr }'
}

rollback() {
	say "roll back: $1"
	bash -c "$CANARY_ROLLBACK" || { say "rollback command failed"; exit 3; }
	exit 1
}

if ! "$docket" collector validate --config "$new"; then
	say "$new does not validate; nothing was changed"
	exit 2
fi

say "applying $new to the canary"
bash -c "$CANARY_APPLY" canary-apply "$new" || rollback "the apply command failed"
# The window opens once the canary takes traffic: senders reconnect after
# its restart with their own back-off.
canary0=""
for _ in $(seq 1 "$warmup"); do
	if c=$(counters "$CANARY_METRICS" 2>/dev/null) && [[ ${c%% *} -gt 0 ]]; then
		canary0=$c
		break
	fi
	sleep 1
done
[[ -n $canary0 ]] || rollback "the canary took no traffic within ${warmup}s"
# shellcheck disable=SC2086 # OTHERS_METRICS is a list
others0=$(counters $OTHERS_METRICS) || { say "cannot read $OTHERS_METRICS"; exit 3; }

say "watching for ${soak}s"
sleep "$soak"
canary1=$(counters "$CANARY_METRICS") || rollback "the canary's metrics stopped answering"
# shellcheck disable=SC2086
others1=$(counters $OTHERS_METRICS) || { say "cannot read $OTHERS_METRICS"; exit 3; }
sleep "$settle"
canary2=$(counters "$CANARY_METRICS") || rollback "the canary's metrics stopped answering"
# shellcheck disable=SC2086
others2=$(counters $OTHERS_METRICS) || { say "cannot read $OTHERS_METRICS"; exit 3; }

verdict=$(awk -v c0="$canary0" -v c1="$canary1" -v c2="$canary2" -v o0="$others0" -v o1="$others1" -v o2="$others2" \
	-v min_spans="$min_spans" -v max_err="$max_error_delta" -v max_drop="$max_completeness_drop" '
	function stats(s0, s1, s2, out,   a, b, c, in_, bad, rec) {
		split(s0, a, " "); split(s1, b, " "); split(s2, c, " ")
		in_ = b[1] - a[1]; rec = b[4] - a[4]
		# A span a failing exporter refuses counts at the receiver too:
		# the larger of the two, not their sum.
		bad = b[2] - a[2]
		if (b[3] - a[3] > bad) bad = b[3] - a[3]
		out["in"] = in_
		out["err"] = in_ > 0 ? bad / in_ : 0
		if (out["err"] > 1) out["err"] = 1
		out["comp"] = rec > 0 ? (c[5] - a[5]) / rec : 1
		if (out["comp"] > 1) out["comp"] = 1
	}
	BEGIN {
		stats(c0, c1, c2, c); stats(o0, o1, o2, o)
		printf "spans in %d (others %d), error rate %.4f (others %.4f), completeness %.4f (others %.4f)\n", c["in"], o["in"], c["err"], o["err"], c["comp"], o["comp"]
		if (o["in"] > 0 && c["in"] < min_spans) print "rollback: the canary received no traffic while the others did"
		else if (c["err"] > o["err"] + max_err) print "rollback: error rate above the others by more than " max_err
		else if (c["comp"] < o["comp"] - max_drop) print "rollback: completeness below the others by more than " max_drop
		else print "proceed"
	}')
say "$(head -n1 <<<"$verdict")"
decision=$(tail -n1 <<<"$verdict")
[[ $decision == proceed ]] || rollback "${decision#rollback: }"
say "proceed: rolling $new out to the other gateways"
bash -c "$CANARY_PROCEED" canary-proceed "$new" || { say "the proceed command failed"; exit 3; }
