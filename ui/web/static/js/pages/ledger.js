// The ledger: filtered calls, newest first, with calls and cost over time
// and the latency distribution above the table.

import { h, replace, append } from '../dom.js';
import * as api from '../api.js';
import { load, fail, pageHeader, section, table, td, num, n, complaintLink, timeEl, statusBadge, empty } from '../ui.js';
import { filterBar, readFilters } from '../filters.js';
import * as charts from '../charts.js';
import * as fmt from '../format.js';

const PAGE = 100;

export default function ledger(ctx) {
  const filters = readFilters(ctx.query);
  const chosenBucket = ctx.query.get('bucket') || '';
  const bucket = chosenBucket === 'hour' || chosenBucket === 'day' ? chosenBucket : fmt.bucketFor(filters.from, filters.to);
  const bucketSelect = h('select', { id: 'filter-bucket', name: 'bucket', testid: 'filter-bucket' },
    h('option', { value: '' }, `Automatic (${fmt.bucketFor(filters.from, filters.to)})`),
    h('option', { value: 'hour', selected: chosenBucket === 'hour' }, 'Hour'),
    h('option', { value: 'day', selected: chosenBucket === 'day' }, 'Day'));
  const seriesBox = h('div', { class: 'chart-box' });
  const latencyBox = h('div', { class: 'chart-box' });
  const tableBox = h('div');
  replace(ctx.main,
    pageHeader('Ledger'),
    filterBar(ctx, '/ledger', filters, [['filter-bucket', 'Chart bucket', bucketSelect]]),
    h('div', { class: 'chart-row' },
      section(`Calls and cost per ${bucket}`, { testid: 'timeseries' }, seriesBox),
      section('Latency', { testid: 'latency' }, latencyBox)),
    section('Calls', { testid: 'ledger-calls' }, tableBox));
  load(seriesBox, 'calls over time', api.get(`/api/v1/timeseries${api.query(Object.assign({ bucket }, filters))}`, ctx.signal), (data) => {
    const points = Array.isArray(data.points) ? data.points : [];
    if (points.length === 0) {
      return empty('No calls in this range.');
    }
    const unknown = points.reduce((a, p) => a + (Number(p.cost_unknown_calls) || 0), 0);
    return [
      h('p', { class: 'legend' },
        h('span', { class: 'key key-calls' }), 'calls ',
        h('span', { class: 'key key-errors' }), 'errors ',
        h('span', { class: 'key key-cost' }), 'cost (known costs; hollow dot: some unknown)'),
      charts.timeseries(points, data.bucket || bucket),
      unknown > 0 ? h('p', { class: 'callout callout-warn', testid: 'cost-unknown-note' },
        `${fmt.plural(unknown, 'call')} in this range had no known cost (unknown model or price, unpriced cache tokens, or token counts of uncertain meaning); the cost line counts only known costs, so totals are lower bounds (+?).`) : null,
    ];
  });
  load(latencyBox, 'the latency distribution', api.get(`/api/v1/latency${api.query(filters)}`, ctx.signal), (data) => {
    if (!Array.isArray(data.buckets) || data.buckets.length === 0 || !data.calls) {
      return empty('No calls in this range.');
    }
    const pct = (name, v) => h('span', { class: 'stat' }, h('span', { class: 'stat-label' }, name), h('span', { class: 'stat-value', testid: `latency-${name}` }, fmt.ms(v)));
    return [
      h('p', { class: 'stats' }, pct('p50', data.p50_ms), pct('p95', data.p95_ms), pct('p99', data.p99_ms),
        h('span', { class: 'stat' }, h('span', { class: 'stat-label' }, 'calls'), h('span', { class: 'stat-value' }, fmt.count(data.calls)))),
      charts.latency(data),
    ];
  });
  callsTable(ctx, filters, tableBox);
}

function row(c) {
  return h('tr', { testid: 'ledger-row' },
    td(h('a', { href: `/complaints/${encodeURIComponent(c.trace_id)}`, testid: 'ledger-link' }, timeEl(c.start_time))),
    td(c.tenant), td(c.service_name), td(c.operation),
    td(c.response_model || c.request_model, { class: 'mono' }), td(c.provider),
    td(statusBadge(c.status, c.error_class)),
    num(fmt.ms(c.duration_ms)),
    num(fmt.count(c.input_tokens)), num(fmt.count(c.output_tokens)),
    num(fmt.costWithStatus(c.cost_usd, c.cost_status)),
    td(c.end_user_ref),
    td(complaintLink(c.trace_id, `${c.trace_id.slice(0, 12)}…`, { title: c.trace_id })));
}

// callsTable loads pages of calls; "Load more" follows the cursor.
function callsTable(ctx, filters, box) {
  const body = [];
  const more = h('button', { type: 'button', class: 'btn', testid: 'load-more' }, 'Load more');
  const footer = h('div', { class: 'table-footer' });
  const count = h('span', { class: 'muted', testid: 'ledger-count' });
  let tbody = null;
  let loaded = 0;
  const page = async (before) => {
    more.disabled = true;
    const data = await api.get(`/api/v1/calls${api.query(Object.assign({ limit: PAGE, before }, filters))}`, ctx.signal);
    const calls = Array.isArray(data.calls) ? data.calls : [];
    loaded += calls.length;
    append(tbody, calls.map(row));
    count.textContent = `${fmt.plural(loaded, 'call')} shown`;
    if (data.next) {
      more.disabled = false;
      replace(footer, count, more);
      more.onclick = () => page(data.next).catch((e) => {
        more.disabled = false;
        fail(e);
      });
    } else {
      replace(footer, count, h('span', { class: 'muted', testid: 'ledger-end' }, ' · end of the ledger for these filters'));
    }
    return calls.length;
  };
  const t = table({ testid: 'ledger-table' },
    ['Start (UTC)', 'Tenant', 'Service', 'Operation', 'Model', 'Provider', 'Status', n('Latency'), n('In tokens'), n('Out tokens'), n('Cost'), 'End user', 'Trace'],
    body);
  tbody = t.querySelector('tbody');
  load(box, 'calls', page(''), (first) => (first === 0 ? empty('No calls match these filters.', 'ledger-empty') : [t, footer]));
}
