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

test('completeness rows join both sides per tenant; a side that did not count is null, not 0', () => {
  const rows = rec.completenessRows({
    collector: { since: '2026-12-02T00:00:00Z', tenants: [{ tenant: 'b', counts: { received: 3, written: 2 }, refused_requests: { malformed: 4 }, pending: 1 }] },
    ledger: [{ tenant: 'a', spans: 5, flagged: 0, conflicts: 1 }, { tenant: 'b', spans: 2, flagged: 1, conflicts: 0 }],
  });
  assert.deepEqual(rows.map((r) => r.tenant), ['a', 'b']);
  assert.equal(rows[0].collector, null);
  assert.equal(rows[0].ledger.spans, 5);
  assert.equal(rows[1].collector.received, 3);
  assert.equal(rows[1].refused.malformed, 4);
  assert.equal(rows[0].refused, null);
  assert.equal(rows[1].pending, 1);
  assert.deepEqual(rec.completenessRows({ collector: null, ledger: [] }), []);
  assert.equal(rec.pending(null), '—');
  assert.equal(rec.pending(0), '0');
  assert.equal(rec.pending(-4), '4 from before the restart');
});
