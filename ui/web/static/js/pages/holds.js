// Legal holds: while one is active, nothing its scope covers expires or is
// deleted. Admins list, create and release them.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { load, pageHeader, section, dl, table, td, timeEl, empty, onSubmit } from '../ui.js';
import { scopeFields, scopeText, reasonField } from '../scope.js';
import { tenantStatusFilter } from '../filters.js';
import * as fmt from '../format.js';

export default function holds(ctx) {
  const tenant = ctx.query.get('tenant') || '';
  const status = ctx.query.get('status') || '';
  const listBox = h('div');
  const released = h('div');
  const created = h('div');
  const reload = () => load(listBox, 'legal holds', api.get(`/api/v1/holds${api.query({ tenant, status })}`, ctx.signal),
    (data) => holdTable(ctx, data, { reload, released }));
  replace(ctx.main,
    pageHeader('Legal holds'),
    section('Holds', { testid: 'holds' }, tenantStatusFilter('holds', '/admin/holds', tenant, status, [['active', 'Active'], ['released', 'Released']]), released, listBox),
    section('Place a legal hold', { testid: 'hold-create' }, createForm(ctx, created, reload), created));
  reload();
}

// after: reload() lists the holds again; released shows a release's result.
function holdTable(ctx, data, after) {
  const list = Array.isArray(data.holds) ? data.holds : [];
  if (list.length === 0) {
    return empty('No legal holds match.', 'holds-empty');
  }
  const rows = [];
  for (const hold of list) {
    const slot = h('td', { colspan: 8, class: 'slot' });
    const slotRow = h('tr', { class: 'slot-row', hidden: true }, slot);
    const release = hold.status === 'active'
      ? h('button', { type: 'button', class: 'btn btn-small', testid: 'hold-release' }, 'Release…')
      : null;
    if (release) {
      release.addEventListener('click', () => {
        slotRow.hidden = false;
        replace(slot, releaseForm(ctx, hold, after));
        release.disabled = true;
      });
    }
    rows.push(h('tr', { testid: 'hold-row', 'data-hold-id': hold.hold_id },
      td(hold.hold_id, { class: 'mono', field: 'hold_id' }),
      td(scopeText(hold.scope), { field: 'scope', class: 'wrap' }),
      td(hold.reason, { field: 'reason', class: 'wrap' }),
      td(hold.created_by, { field: 'created_by' }),
      td(timeEl(hold.created_at), { field: 'created_at' }),
      td(hold.status, { field: 'status' }),
      td(hold.status === 'released'
        ? `${hold.released_by || '?'} at ${fmt.time(hold.released_at)}: ${hold.release_reason || ''}`
        : '', { field: 'released', class: 'wrap' }),
      td(release)), slotRow);
  }
  return table({ testid: 'holds-table' }, ['Hold', 'Scope', 'Reason', 'Created by', 'Created (UTC)', 'Status', 'Released', ''], rows);
}

function releaseForm(ctx, hold, after) {
  const id = `release-reason-${hold.hold_id}`;
  const reason = reasonField(id, 'release-reason', 'litigation settled, counsel approved release');
  const submit = h('button', { type: 'submit', class: 'btn btn-danger', testid: 'release-submit' }, 'Release hold');
  const form = h('form', { class: 'inline-form', testid: 'release-form' },
    h('label', { for: id }, `Why release ${hold.hold_id}? Deletion requests it blocked run again.`),
    reason,
    h('div', { class: 'actions' }, submit));
  onSubmit(form, submit, async () => {
    const res = await api.post(`/api/v1/holds/${encodeURIComponent(hold.hold_id)}/release`, { reason: reason.value.trim() }, ctx.signal);
    const resumed = Array.isArray(res.resumed) ? res.resumed : [];
    replace(after.released, h('div', { class: 'result', testid: 'release-result' },
      h('h3', null, `Released ${hold.hold_id}`),
      dl([
        ['Objects released', 'objects_released', fmt.count(res.objects_released)],
        ['Objects still held by other holds', 'objects_still_held', fmt.count(res.objects_still_held)],
        ['Deletion requests resumed', 'resumed', resumed.length === 0 ? 'none' : resumed.map((j) => `${j.job_id} (${j.status})`).join(', ')],
      ])));
    after.reload();
  });
  return form;
}

function createForm(ctx, created, reload) {
  const scope = scopeFields(ctx, 'hold');
  const reason = reasonField('hold-reason', 'hold-reason', 'preservation order, case 24-cv-1234');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'hold-submit' }, 'Place hold');
  const form = h('form', { class: 'stack', testid: 'hold-form' },
    scope.nodes,
    h('div', { class: 'form-row' }, h('label', { for: 'hold-reason' }, 'Reason (recorded)'), reason),
    h('div', { class: 'actions' }, submit));
  onSubmit(form, submit, async () => {
    // lifecycle.HoldRequest: {Scope, Reason}; Go's JSON decoding matches
    // the lower-case keys.
    const res = await api.post('/api/v1/holds', { scope: scope.read(), reason: reason.value.trim() }, ctx.signal);
    const hold = res.hold || {};
    const applied = res.applied || {};
    replace(created, h('div', { class: 'result', testid: 'hold-result' },
      h('h3', null, `Hold ${hold.hold_id || ''} is in force`),
      dl([
        ['Scope', 'scope', scopeText(hold.scope)],
        ['Objects held by the store', 'objects_held', fmt.count(applied.objects_held)],
        ['Objects protected by Docket only (store without legal hold)', 'objects_not_enforced', fmt.count(applied.objects_not_enforced)],
        ['Objects already gone', 'objects_missing', fmt.count(applied.objects_missing)],
      ])));
    form.reset();
    reload();
  });
  return form;
}
