// Reconciliation: the ledger against the providers' own usage reports, per
// day, provider and model, with the drift and a state per cell, and the
// imports the reports came from. Unknown is never shown as zero.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { load, pageHeader, section, table, td, num, n, empty, timeEl } from '../ui.js';
import * as fmt from '../format.js';
import * as rec from '../reconcile.js';

const PROVIDERS = [['', 'All providers'], ['openai', 'OpenAI'], ['anthropic', 'Anthropic']];

export default function reconcile(ctx) {
  const params = { from: ctx.query.get('from') || '', to: ctx.query.get('to') || '', provider: ctx.query.get('provider') || '',
    tolerance: ctx.query.get('tolerance') || '' };
  const box = h('div');
  const importsBox = h('div');
  const accountBox = h('div');
  replace(ctx.main,
    pageHeader('Reconciliation'),
    h('p', { class: 'muted' }, 'Calls in the ledger against the usage the providers report, per UTC day. ',
      'A provider bills the whole organization, so every tenant\'s calls count.'),
    filterForm(params),
    section('Ledger against provider', { testid: 'reconcile' }, box),
    section('Where each tenant\'s calls went', { testid: 'completeness' }, accountBox),
    section('Imported provider reports', { testid: 'usage-imports' }, importsBox,
      fmt.roleFor(ctx.session.grants, '*') === 'admin' ? uploadForm(ctx) : null));
  load(box, 'reconciliation', api.get(`/api/v1/reconcile${api.query(params)}`, ctx.signal), (data) => {
    replace(importsBox, imports(data.imports));
    return cells(data.report || {});
  });
  load(accountBox, 'completeness', api.get('/api/v1/completeness', ctx.signal), account);
}

// account shows, per tenant, the collector's counts since it started and
// what the ledger holds of the calls received since then.
function account(data) {
  const rows = rec.completenessRows(data);
  const since = data.collector
    ? ['Collector counts since it started, ', timeEl(data.collector.since), '; ledger rows received since then. ']
    : ['This UI runs apart from the collector: its counts are in the metric otelcol_exporter_ledger_completeness_spans. Ledger rows of the last day. '];
  const intro = h('p', { class: 'muted', testid: 'completeness-since' }, since,
    'Dropped in the app before export: what the applications\' own OpenTelemetry SDKs report they dropped (the Go SDK with OTEL_GO_X_OBSERVABILITY=true, sending metrics to the collector). ',
    'Calls the provider answered that no column counts were lost before Docket, in the application: the table above shows them.');
  if (rows.length === 0) {
    return [intro, empty('No calls in this range.', 'completeness-empty')];
  }
  const val = (side, key) => (side ? fmt.count(side[key] || 0) : fmt.UNKNOWN_COST);
  const headers = ['Tenant', ...rec.REFUSALS.map(([, label]) => n(label)),
    ...rec.COLLECTOR_STAGES.map(([, label]) => n(label)), n('In queue or lost'),
    n('Ledger calls'), n('Ledger flagged'), n('Conflicts')];
  return [intro, table({ testid: 'completeness-table' }, headers, rows.map((r) => h('tr', { testid: 'completeness-row', 'data-tenant': r.tenant },
    td(r.tenant === '' ? '(no identity)' : r.tenant, { class: 'mono', field: 'tenant' }),
    rec.REFUSALS.map(([reason]) => num(val(r.refused, reason), { field: `refused_${reason}` })),
    rec.COLLECTOR_STAGES.map(([stage]) => num(val(r.collector, stage), { field: stage })),
    num(rec.pending(r.pending), { field: 'pending' }),
    num(val(r.ledger, 'spans'), { field: 'ledger_spans' }),
    num(val(r.ledger, 'flagged'), { field: 'ledger_flagged' }),
    num(val(r.ledger, 'conflicts'), { field: 'ledger_conflicts' })))),
  h('p', { class: 'muted' }, 'Requests refused count requests, not spans: how many spans a refused request carried is not known. ',
    'Those of senders whose credentials named no tenant count under the reserved unknown tenant. ',
    'Refused to retry later: the sender keeps the spans and sends them again. ',
    'Flagged: stored with a value the conventions reject left out. Conflicts: sent again with other content; the first stays.')];
}

function filterForm(params) {
  const field = (id, label, control) => h('div', { class: 'filter' }, h('label', { for: id }, label), control);
  const from = h('input', { id: 'rec-from', name: 'from', type: 'date', value: params.from.slice(0, 10), testid: 'rec-from' });
  const to = h('input', { id: 'rec-to', name: 'to', type: 'date', value: params.to.slice(0, 10), testid: 'rec-to' });
  const provider = h('select', { id: 'rec-provider', name: 'provider', testid: 'rec-provider' },
    PROVIDERS.map(([v, l]) => h('option', { value: v, selected: v === params.provider }, l)));
  const tolerance = h('input', { id: 'rec-tolerance', name: 'tolerance', type: 'number', min: '0.01', step: '0.01',
    value: params.tolerance, placeholder: '0.5', testid: 'rec-tolerance' });
  const form = h('form', { class: 'filter-bar', testid: 'rec-filter' },
    field('rec-from', 'From (UTC day)', from),
    field('rec-to', 'To (UTC day, exclusive)', to),
    field('rec-provider', 'Provider', provider),
    field('rec-tolerance', 'Tolerance (%)', tolerance),
    h('div', { class: 'filter filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'rec-apply' }, 'Apply'),
      h('a', { href: '/reconcile', class: 'btn' }, 'Reset')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate(`/reconcile${api.query({ from: from.value, to: to.value, provider: provider.value, tolerance: tolerance.value })}`);
  });
  return form;
}

function cells(report) {
  const list = Array.isArray(report.cells) ? report.cells : [];
  const states = report.states || {};
  const summary = h('p', { testid: 'rec-summary' },
    `${report.from || ''} to ${report.to || ''} (exclusive), tolerance ${report.tolerance_percent}%: `,
    Object.keys(rec.STATES).filter((s) => states[s] > 0).map((s, i) => [i > 0 ? ', ' : '',
      h('span', { class: `badge ${rec.STATES[s][1]}` }, `${fmt.count(states[s])} ${rec.stateLabel(s)}`)]));
  if (list.length === 0) {
    return [summary, empty('Neither the ledger nor an imported report has calls in this range.', 'rec-empty')];
  }
  const byKey = report.by_key;
  const headers = ['Day', 'Provider', 'Model', ...(byKey ? ['API key'] : []),
    n('Ledger calls'), n('Provider calls'), n('Calls drift'),
    n('Ledger input'), n('Provider input'), n('Input drift'),
    n('Ledger output'), n('Provider output'), n('Output drift'), n('Cached drift'), 'State'];
  const rows = list.map((c) => {
    const p = c.reported || {};
    const d = c.drift_percent || {};
    const [label, cls] = rec.STATES[c.state] || [c.state, ''];
    return h('tr', { testid: 'rec-row', 'data-state': c.state },
      td(c.day, { class: 'mono', field: 'day' }),
      td(c.provider, { field: 'provider' }),
      td(c.model, { class: 'mono', field: 'model' }),
      byKey ? td(c.api_key_id || 'unmapped', { class: 'mono', field: 'api_key_id' }) : null,
      num(fmt.count(c.ledger.requests), { field: 'ledger_requests', title: c.ledger_errors > 0 ? `${fmt.plural(c.ledger_errors, 'failed call')} not compared` : null }),
      num(fmt.count(p.requests), { field: 'provider_requests' }),
      num(rec.drift(d.requests), { field: 'drift_requests' }),
      num(rec.tokens(c.ledger.input_tokens, c.ledger_usage_unknown), { field: 'ledger_input' }),
      num(fmt.count(p.input_tokens), { field: 'provider_input' }),
      num(rec.drift(d.input_tokens), { field: 'drift_input' }),
      num(rec.tokens(c.ledger.output_tokens, c.ledger_usage_unknown), { field: 'ledger_output' }),
      num(fmt.count(p.output_tokens), { field: 'provider_output' }),
      num(rec.drift(d.output_tokens), { field: 'drift_output' }),
      num(rec.drift(d.cache_read_tokens), { field: 'drift_cached' }),
      td(h('span', { class: `badge ${cls}` }, label), { field: 'state' }));
  });
  return [summary, table({ testid: 'rec-table' }, headers, rows),
    h('p', { class: 'muted' }, 'Drift is (ledger − provider) ÷ provider. Anthropic\'s report counts tokens, not requests: ',
      'there the calls are judged by their tokens. Failed calls are counted apart (hover the ledger count).')];
}

// uploadForm imports a provider's CSV usage export (admins of all tenants).
function uploadForm(ctx) {
  const provider = h('select', { id: 'upload-provider', name: 'provider', testid: 'upload-provider' },
    PROVIDERS.slice(1).map(([v, l]) => h('option', { value: v }, l)));
  const file = h('input', { id: 'upload-file', name: 'file', type: 'file', accept: '.csv,text/csv', required: true, testid: 'upload-file' });
  const result = h('p', { role: 'status' });
  const form = h('form', { class: 'filter-bar', testid: 'upload-form' },
    h('div', { class: 'filter' }, h('label', { for: 'upload-provider' }, 'Provider'), provider),
    h('div', { class: 'filter' }, h('label', { for: 'upload-file' }, 'Usage CSV export'), file),
    h('div', { class: 'filter filter-actions' }, h('button', { type: 'submit', class: 'btn', testid: 'upload-submit' }, 'Import')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const chosen = file.files && file.files[0];
    if (!chosen) {
      return;
    }
    try {
      const imp = await api.postText(`/api/v1/usage/imports${api.query({ provider: provider.value, name: chosen.name })}`,
        await chosen.text(), 'text/csv', ctx.signal);
      replace(result, `Imported ${fmt.plural(imp.rows, 'row')} (${imp.from_day} to ${imp.to_day}). `,
        h('a', { href: `/reconcile${api.query({ from: imp.from_day, to: imp.to_day })}` }, 'Reconcile these days'));
    } catch (err) {
      replace(result, h('span', { class: 'section-error', testid: 'upload-error' }, `Import failed: ${err.message}`));
    }
  });
  return [h('h3', null, 'Import a usage export'), form, result];
}

function imports(list) {
  if (!Array.isArray(list) || list.length === 0) {
    return empty('No provider report has been imported. Run `docket usage import` or configure the scheduled pull.', 'imports-empty');
  }
  return table({ testid: 'imports-table' }, ['Imported', 'By', 'Provider', 'Source', 'From', 'Days', n('Rows')],
    list.map((i) => h('tr', { testid: 'import-row' },
      td(timeEl(i.imported_at)),
      td(i.actor, { field: 'actor' }),
      td(i.provider),
      td(i.source),
      td(i.origin, { class: 'mono', field: 'origin' }),
      td(`${i.from_day} – ${i.to_day}`, { class: 'mono' }),
      num(fmt.count(i.rows)))));
}
