// Display rules of the UI, run by node's test runner (web_test.go starts it).

import test from 'node:test';
import assert from 'node:assert/strict';
import * as fmt from '../static/js/format.js';

test('an unknown cost is a dash, never $0', () => {
  assert.equal(fmt.costWithStatus(undefined, undefined), '—');
  assert.equal(fmt.costWithStatus('0', 'ok'), '$0');
  assert.equal(fmt.costWithStatus('0.000123', 'ok'), '$0.000123');
  assert.equal(fmt.costWithStatus(null, 'unknown_model'), '— (unknown_model)');
  assert.equal(fmt.costWithStatus(null, ''), '—');
  assert.equal(fmt.costWithStatus('0.5', 'ok'), '$0.5');
});

test('a total with unknown parts carries +?', () => {
  assert.equal(fmt.totalCost('1.23', 2), '$1.23 +?');
  assert.equal(fmt.totalCost('1.23', 0), '$1.23');
  assert.equal(fmt.totalCost(null, 3), '—');
  // The decimal string is shown as sent, without float rounding.
  assert.equal(fmt.totalCost('0.100000000000000001', 0), '$0.100000000000000001');
});

test('a missing count is not reported, never 0', () => {
  assert.equal(fmt.count(null), 'not reported');
  assert.equal(fmt.count(undefined), 'not reported');
  assert.equal(fmt.count(0), '0');
  assert.equal(fmt.count(1234567), '1,234,567');
  assert.equal(fmt.ms(null), 'not reported');
  assert.equal(fmt.ms(1234.56), '1,234.6 ms');
  assert.equal(fmt.number(null), 'not reported');
  assert.equal(fmt.number(0), '0');
});

test('token totals mark unknown parts', () => {
  assert.equal(fmt.partialCount(15, [10, null, 5]), '15 +?');
  assert.equal(fmt.partialCount(15, [10, 5]), '15');
  assert.equal(fmt.partialCount(null, [null, null]), 'not reported');
  assert.equal(fmt.partialCount(0, [0]), '0');
});

test('times are shown in UTC ISO form', () => {
  assert.equal(fmt.time('2026-11-29T10:00:00Z'), '2026-11-29T10:00:00Z');
  assert.equal(fmt.time('2026-11-29T11:00:00.250+01:00'), '2026-11-29T10:00:00.250Z');
  assert.equal(fmt.time('0001-01-01T00:00:00Z'), 'not set');
  assert.equal(fmt.time(''), 'not reported');
  assert.equal(fmt.time('yesterday-ish'), 'yesterday-ish');
});

test('datetime-local inputs are read and written as UTC', () => {
  assert.equal(fmt.fromInput('2026-11-29T10:05'), '2026-11-29T10:05:00Z');
  assert.equal(fmt.fromInput('2026-11-29T10:05:30'), '2026-11-29T10:05:30Z');
  assert.equal(fmt.fromInput(''), '');
  assert.equal(fmt.fromInput('2026-13-45T99:99'), '');
  assert.equal(fmt.fromInput('not a date'), '');
  assert.equal(fmt.toInput('2026-11-29T10:05:00Z'), '2026-11-29T10:05');
  assert.equal(fmt.toInput('2026-11-29T11:05:00+01:00'), '2026-11-29T10:05');
  assert.equal(fmt.toInput(''), '');
});

test('time-series buckets follow the range', () => {
  assert.equal(fmt.bucketFor('2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z'), 'hour');
  assert.equal(fmt.bucketFor('2026-11-01T00:00:00Z', '2026-11-30T00:00:00Z'), 'day');
  assert.equal(fmt.bucketFor('', ''), 'day');
});

test('rates show their parts', () => {
  assert.equal(fmt.rate(8, 10), '80.0% (8/10)');
  assert.equal(fmt.rate(0, 0), 'n/a');
  assert.equal(fmt.rate(null, 10), 'n/a');
});

test('roles: the stronger of the tenant grant and the grant of all', () => {
  const grants = { '*': 'viewer', acme: 'admin', beta: 'auditor' };
  assert.equal(fmt.roleFor(grants, 'acme'), 'admin');
  assert.equal(fmt.roleFor(grants, 'beta'), 'auditor');
  assert.equal(fmt.roleFor(grants, 'other'), 'viewer');
  assert.equal(fmt.roleFor({ acme: 'viewer' }, 'other'), '');
  assert.equal(fmt.roleFor({ '*': 'admin', acme: 'viewer' }, 'acme'), 'admin');
  // A tenant named like an Object property is still just a key.
  assert.equal(fmt.roleFor({}, 'constructor'), '');
  assert.ok(fmt.anyGrant(grants, 'admin'));
  assert.ok(!fmt.anyGrant({ acme: 'auditor' }, 'admin'));
  assert.ok(fmt.atLeast('admin', 'auditor'));
  assert.ok(!fmt.atLeast('viewer', 'auditor'));
  assert.ok(!fmt.atLeast('superuser', 'viewer'));
  assert.equal(fmt.grantsText({ acme: 'viewer', '*': 'admin' }), 'all tenants: admin · acme: viewer');
  assert.equal(fmt.grantsText({}), 'no grants');
});

test('after sign-in only paths of this site are followed', () => {
  assert.equal(fmt.safeNext('/complaints/abc?x=1'), '/complaints/abc?x=1');
  assert.equal(fmt.safeNext('//evil.example/'), '/');
  assert.equal(fmt.safeNext('https://evil.example/'), '/');
  assert.equal(fmt.safeNext('/\\evil.example'), '/');
  assert.equal(fmt.safeNext('javascript:alert(1)'), '/');
  assert.equal(fmt.safeNext('/login?next=/x'), '/');
  assert.equal(fmt.safeNext(null), '/');
});

test('only the documented export download path becomes a link', () => {
  assert.equal(fmt.safeDownload('/api/v1/exports/exp_01.zip'), '/api/v1/exports/exp_01.zip');
  assert.equal(fmt.safeDownload('javascript:alert(1)'), '');
  assert.equal(fmt.safeDownload('https://evil.example/x.zip'), '');
  assert.equal(fmt.safeDownload('/api/v1/exports/../session.zip'), '');
  assert.equal(fmt.safeDownload(undefined), '');
});

test('content is pretty-printed only when it is a JSON object or array', () => {
  assert.equal(fmt.pretty('{"a":[1,2]}'), '{\n  "a": [\n    1,\n    2\n  ]\n}');
  const hostile = '<script>alert(1)</script><img src=http://evil>';
  assert.equal(fmt.pretty(hostile), hostile);
  assert.equal(fmt.pretty('{not json'), '{not json');
  assert.equal(fmt.pretty('42'), '42');
  assert.equal(fmt.pretty(''), '');
});

test('latency buckets are labelled by their bounds', () => {
  const buckets = fmt.histogram([{ le_ms: 100, count: 2 }, { le_ms: 500, count: 5 }, { le_ms: null, count: 1 }]);
  assert.deepEqual(buckets, [{ le: 100, count: 2 }, { le: 500, count: 5 }, { le: null, count: 1 }]);
  assert.equal(fmt.bucketLabel(buckets, 0), '≤100 ms');
  assert.equal(fmt.bucketLabel(buckets, 2), '>500 ms');
  assert.equal(fmt.bucketLabel(fmt.histogram([{ le_ms: null, count: 3 }]), 0), 'all');
  assert.deepEqual(fmt.histogram(null), []);
});

test('replay reports are read defensively', () => {
  const report = JSON.stringify({
    status: 'replayed', requested: 10, completed: 10, failed: 0, requests: 10,
    estimated_cost_per_replay: '$0.0012', exact_match_rate: 0.8, lifecycle: 'announced, retires on 2026-11-30',
    variants: [{ count: 8, matches_original: true }, { count: 2, matches_original: false, divergence: { char: 14, byte: 16, token: 3 } }],
  });
  const s = fmt.replaySummary(report);
  assert.equal(s.known, true);
  assert.equal(s.distinctOutputs, 2);
  assert.equal(fmt.divergenceText(s.divergence), 'character 15, token 4');
  assert.equal(fmt.divergenceText({ char: 20, byte: 20, token: 4, tokens: 6, tokens_from: 'o200k_base' }), 'character 21, token 5 of 6 (o200k_base)');
  assert.equal(fmt.divergenceText({ char: 10, byte: 10, token: 2, tokens: 2, tokens_from: 'sampled' }), 'character 11, after the last of 2 tokens (sampled)');
  assert.equal(fmt.divergenceText({ char: 0, byte: 0 }), 'character 1');
  assert.equal(s.lifecycle, 'announced, retires on 2026-11-30');
  assert.equal(s.estimatedCost, '$0.0012');

  const irreproducible = fmt.replaySummary('{"status":"irreproducible","reason":"irreproducible: model retired on 2025-01-01","requested":5,"completed":0}');
  assert.equal(irreproducible.known, true);
  assert.equal(irreproducible.distinctOutputs, null);
  assert.equal(irreproducible.reason, 'irreproducible: model retired on 2025-01-01');

  assert.equal(fmt.replaySummary('not json').known, false);
  assert.equal(fmt.replaySummary('[1,2]').known, false);
  assert.equal(fmt.replaySummary('null').known, false);
  const odd = fmt.replaySummary('{"variants":"many","failed":"x","param_changes":[null,{"param":"seed"}]}');
  assert.equal(odd.known, true);
  assert.equal(odd.distinctOutputs, null);
  assert.equal(odd.failed, null);
  assert.equal(odd.paramChanges.length, 1);
  assert.equal(fmt.divergenceText(null), 'none');
  assert.equal(fmt.divergenceText({}), 'position not recorded');
});

test('plural counts', () => {
  assert.equal(fmt.plural(1, 'call'), '1 call');
  assert.equal(fmt.plural(2000, 'call'), '2,000 calls');
  assert.equal(fmt.plural(0, 'trace'), '0 traces');
});
