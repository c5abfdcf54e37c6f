// Display rules of the reconciliation page. No DOM here, so node's test
// runner checks them (jstest/reconcile.test.js).

import * as fmt from './format.js';

// STATES: each cell state's label and badge class, in the order shown.
export const STATES = {
  ledger_missing_calls: ['Ledger missing calls', 'badge-error'],
  ledger_extra_calls: ['Ledger has calls the provider does not', 'badge-error'],
  tokens_differ: ['Tokens differ', 'badge-error'],
  undetermined: ['Cannot compare', ''],
  not_imported: ['No provider report', ''],
  within_tolerance: ['Within tolerance', 'badge-ok'],
};

// drift is a signed percentage with two decimals; unknown is "—", never 0.
export function drift(pct) {
  if (pct === null || pct === undefined || !Number.isFinite(Number(pct))) {
    return fmt.UNKNOWN_COST;
  }
  const v = Number(pct);
  const text = `${Math.abs(v).toFixed(2)}%`;
  if (text === '0.00%') {
    return v === 0 ? '0.00%' : `${v < 0 ? '−' : '+'}<0.01%`;
  }
  return `${v < 0 ? '−' : '+'}${text}`;
}

// tokens is a ledger token sum: "+?" when some answered calls reported no
// usage, "not reported" when none did.
export function tokens(sum, unknownCalls) {
  return unknownCalls > 0 && sum !== null && sum !== undefined ? `${fmt.count(sum)} +?` : fmt.count(sum);
}

// stateLabel names a state; an unknown one is shown as sent.
export function stateLabel(state) {
  return STATES[state] ? STATES[state][0] : String(state);
}

// COLLECTOR_STAGES: the collector's account per tenant (package
// completeness), in the order spans pass them, with their column titles.
export const COLLECTOR_STAGES = [
  ['dropped_in_app', 'Dropped in the app before export'],
  ['refused_auth', 'Refused: identity'],
  ['refused_retry', 'Refused: retry later'],
  ['refused_invalid', 'Refused: invalid'],
  ['received', 'Received'],
  ['flagged', 'Flagged'],
  ['written', 'Written'],
];

// REFUSALS: requests the collector refused before their spans could be
// counted (package completeness), with their column titles.
export const REFUSALS = [
  ['auth', 'Requests refused: identity'],
  ['malformed', 'Requests refused: malformed'],
];

// completenessRows joins, per tenant, the collector's account and the
// ledger's side (GET /api/v1/completeness). A side that did not count a
// tenant is null (shown "—"), never 0: without a collector in the UI's
// process its counts are unknown.
export function completenessRows(data) {
  const byTenant = new Map();
  const row = (tenant) => {
    if (!byTenant.has(tenant)) {
      byTenant.set(tenant, { tenant, collector: null, refused: null, pending: null, ledger: null });
    }
    return byTenant.get(tenant);
  };
  const collector = data && data.collector;
  for (const t of (collector && collector.tenants) || []) {
    const r = row(t.tenant);
    r.collector = t.counts || {};
    r.refused = t.refused_requests || {};
    r.pending = t.pending;
  }
  for (const l of (data && data.ledger) || []) {
    row(l.tenant).ledger = l;
  }
  return [...byTenant.values()].sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
}

// pending is received − written: in the queue, or lost in it; negative
// after a restart, when the queue wrote what an earlier process received.
export function pending(n) {
  if (n === null || n === undefined) {
    return fmt.UNKNOWN_COST;
  }
  return n < 0 ? `${fmt.count(-n)} from before the restart` : fmt.count(n);
}
