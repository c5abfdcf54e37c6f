// Display rules of the reconciliation page, run by node's test runner.

import test from 'node:test';
import assert from 'node:assert/strict';
import * as rec from '../static/js/reconcile.js';

test('drift is signed, and unknown is a dash, never 0', () => {
  assert.equal(rec.drift(-1), '−1.00%');
  assert.equal(rec.drift(0.5), '+0.50%');
  assert.equal(rec.drift(0), '0.00%');
  assert.equal(rec.drift(-0.001), '−<0.01%');
  assert.equal(rec.drift(null), '—');
  assert.equal(rec.drift(undefined), '—');
});

test('a ledger token sum with calls without usage carries +?', () => {
  assert.equal(rec.tokens(1234, 0), '1,234');
  assert.equal(rec.tokens(1234, 2), '1,234 +?');
  assert.equal(rec.tokens(null, 5), 'not reported');
});

test('every state has a label', () => {
  for (const s of ['ledger_missing_calls', 'ledger_extra_calls', 'tokens_differ', 'undetermined', 'not_imported', 'within_tolerance']) {
    assert.notEqual(rec.stateLabel(s), s);
  }
  assert.equal(rec.stateLabel('new_state'), 'new_state');
});
