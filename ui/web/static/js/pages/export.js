// Audit export: a bundle of the ledger for a tenant and time range, with a
// manifest of row counts, totals and hashes that `docket export verify`
// checks later.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { fail, pageHeader, section, dl, table, td, num, n, clearAlerts, timeEl } from '../ui.js';
import { options } from '../filters.js';
import * as fmt from '../format.js';

export default function exportPage(ctx) {
  const grants = ctx.session.grants || {};
  const mayExport = (tenant) => fmt.atLeast(fmt.roleFor(grants, tenant), 'auditor');
  const isAdmin = fmt.anyGrant(grants, 'admin');
  const tenant = h('select', { id: 'export-tenant', name: 'tenant', testid: 'export-tenant' });
  const allLabel = mayExport('*') ? 'All tenants' : 'Choose a tenant';
  const grantTenants = Object.keys(grants).filter((t) => t !== '*' && mayExport(t)).sort();
  options(tenant, allLabel, grantTenants, '');
  if (!mayExport('*')) {
    tenant.required = true;
    tenant.firstChild.disabled = true;
  }
  const now = new Date();
  const monthAgo = new Date(now.getTime() - 30 * 24 * 3600 * 1000);
  const input = (id, props) => h('input', Object.assign({ id, name: id.replace('export-', ''), testid: id }, props));
  const from = input('export-from', { type: 'datetime-local', required: true, value: monthAgo.toISOString().slice(0, 16) });
  const to = input('export-to', { type: 'datetime-local', required: true, value: new Date(now.getTime() + 60000).toISOString().slice(0, 16) });
  const format = h('select', { id: 'export-format', name: 'format', testid: 'export-format' },
    h('option', { value: 'jsonl' }, 'JSON Lines'), h('option', { value: 'csv' }, 'CSV'), h('option', { value: 'parquet' }, 'Parquet'));
  const reason = h('textarea', { id: 'export-reason', name: 'reason', required: true, maxlength: 1000, rows: 2, testid: 'export-reason', class: 'wide', placeholder: 'audit request 2026-Q4 from the regulator' });
  const accessLog = input('export-access-log', { type: 'checkbox', disabled: !isAdmin });
  const state = input('export-state', { type: 'checkbox' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'export-submit', disabled: !fmt.anyGrant(grants, 'auditor') }, 'Export');
  const result = h('div', { testid: 'export-result-slot' });
  const row = (id, label, control) => h('div', { class: 'form-row' }, h('label', { for: id }, label), control);
  const form = h('form', { class: 'stack panel', testid: 'export-form' },
    row('export-tenant', 'Tenant', tenant),
    h('div', { class: 'form-pair' }, row('export-from', 'From (UTC)', from), row('export-to', 'To (UTC, exclusive)', to)),
    row('export-format', 'Format', format),
    row('export-reason', 'Reason (recorded in the access log)', reason),
    h('div', { class: 'checks' },
      h('label', { class: isAdmin ? null : 'muted' }, accessLog, ' Include the access log', isAdmin ? null : ' (admins only)'),
      h('label', null, state, ' Include lifecycle records (holds, deletion jobs, content events, expiry runs)')),
    fmt.anyGrant(grants, 'auditor') ? null : h('p', { class: 'callout' }, 'Exports need the auditor or admin role; your grants are viewer only.'),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlerts();
    const body = {
      tenant: tenant.value,
      from: fmt.fromInput(from.value),
      to: fmt.fromInput(to.value),
      format: format.value,
      reason: reason.value.trim(),
      include_access_log: accessLog.checked,
      include_state: state.checked,
    };
    if (!body.reason) {
      reason.setCustomValidity('A reason is required.');
      reason.reportValidity();
      return;
    }
    submit.disabled = true;
    replace(result, h('p', { class: 'loading', testid: 'loading', role: 'status' }, 'Exporting… (large ranges take a while)'));
    try {
      const res = await api.post('/api/v1/exports', body, ctx.signal);
      replace(result, manifestView(res));
    } catch (err) {
      replace(result);
      fail(err);
    } finally {
      submit.disabled = false;
    }
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  replace(ctx.main, pageHeader('Export for audit'), form, result);
  if (mayExport('*')) {
    // With a grant of all tenants, list every tenant the ledger has.
    api.get('/api/v1/facets', ctx.signal).then((f) => options(tenant, allLabel, f && f.tenants, tenant.value), fail);
  }
}

function sumText(sum, money) {
  if (!sum || typeof sum !== 'object') {
    return fmt.NOT_REPORTED;
  }
  if (!(sum.known_rows > 0) && sum.unknown_rows > 0) {
    return money ? `${fmt.UNKNOWN_COST} (${sum.unknown_rows} unknown)` : `${fmt.NOT_REPORTED} (${sum.unknown_rows} rows)`;
  }
  // The manifest's total already carries " +?" when rows were unknown.
  return money ? `$${sum.total}` : String(sum.total);
}

function manifestView(res) {
  const m = res.manifest || {};
  const q = m.query || {};
  const totals = m.totals || {};
  const files = Array.isArray(m.files) ? m.files : [];
  const href = fmt.safeDownload(res.download);
  const statuses = totals.cost_status && typeof totals.cost_status === 'object' ? Object.entries(totals.cost_status) : [];
  return section('Export ready', { testid: 'export-result' },
    href
      ? h('p', null, h('a', { href, download: `docket-export-${res.id || 'bundle'}.zip`, class: 'btn btn-primary', testid: 'export-download' }, 'Download the bundle (zip)'))
      : h('p', { class: 'callout callout-warn' }, 'The server sent no usable download link.'),
    h('p', { class: 'hint', testid: 'export-verify-hint' },
      'Unzip the bundle into a directory and run ', h('code', null, 'docket export verify DIR'),
      ': it checks every file’s SHA-256, row count and hash chain against manifest.json and the root below.'),
    dl([
      ['Export ID', 'id', res.id || fmt.NOT_REPORTED],
      ['Download until', 'expires_at', timeEl(res.expires_at)],
      ['Generated', 'generated_at', timeEl(m.generated_at)],
      ['By', 'generated_by', m.generated_by || fmt.NOT_REPORTED],
      ['Tenant', 'tenant', q.tenant || 'all tenants'],
      ['Range (UTC)', 'range', `${fmt.time(q.from)} → ${fmt.time(q.to)}`],
      ['Format', 'format', q.format || fmt.NOT_REPORTED],
      ['Calls', 'calls', fmt.count(totals.calls)],
      ['Input tokens', 'input_tokens', sumText(totals.input_tokens, false)],
      ['Output tokens', 'output_tokens', sumText(totals.output_tokens, false)],
      ['Cost', 'cost_usd', sumText(totals.cost_usd, true)],
      ['Calls by cost status', 'cost_status', statuses.length > 0 ? statuses.map(([k, v]) => `${k}: ${v}`).join(', ') : 'none'],
      ['Root', 'root', h('code', { class: 'hash', testid: 'manifest-root' }, m.root || fmt.NOT_REPORTED)],
      ['Access-log event', 'access_event_id', m.access_event_id || fmt.NOT_REPORTED],
      ['Engine', 'engine', m.engine || fmt.NOT_REPORTED],
    ]),
    table({ testid: 'export-files' }, ['File', 'Table', 'Format', n('Rows'), n('Bytes'), 'SHA-256', 'Chain head'],
      files.map((f) => h('tr', { testid: 'export-file' },
        td(f.name, { class: 'mono' }), td(f.table), td(f.format), num(fmt.count(f.rows)), num(fmt.count(f.bytes)),
        td(h('code', { class: 'hash' }, f.sha256 || ''), { class: 'wrap' }), td(h('code', { class: 'hash' }, f.chain_head || ''), { class: 'wrap' })))));
}
