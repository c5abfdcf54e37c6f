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
