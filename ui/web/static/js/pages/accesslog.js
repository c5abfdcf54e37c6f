// The access log: every reveal, replay run, export and lifecycle action,
// allowed or not, with who, when, why and what happened.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { load, pageHeader, section, table, td, timeEl, complaintLink, empty } from '../ui.js';
import * as fmt from '../format.js';

const OUTCOMES = ['allowed', 'denied', 'failed'];
const LIMIT = 200;

export default function accessLog(ctx) {
  const f = {
    tenant: ctx.query.get('tenant') || '',
    actor: ctx.query.get('actor') || '',
    action: ctx.query.get('action') || '',
    outcome: ctx.query.get('outcome') || '',
    since: ctx.query.get('since') || '',
  };
  const input = (name, props) => h('input', Object.assign({ id: `access-${name}`, name, value: f[name], testid: `access-${name}`, autocomplete: 'off' }, props || {}));
  const tenant = input('tenant', { placeholder: 'all tenants' });
  const actor = input('actor', { placeholder: 'anyone' });
  const action = input('action', { list: 'access-actions', placeholder: 'any action' });
  const outcome = h('select', { id: 'access-outcome', name: 'outcome', testid: 'access-outcome' },
    h('option', { value: '' }, 'Any outcome'),
    OUTCOMES.map((o) => h('option', { value: o, selected: o === f.outcome }, o)));
  // The API lists the actions the log records (declared in Go); they fill
  // the suggestions when the entries arrive.
  const actions = h('datalist', { id: 'access-actions' });
  const since = h('input', { id: 'access-since', name: 'since', type: 'datetime-local', value: fmt.toInput(f.since), testid: 'access-since' });
  const field = (id, label, control) => h('div', { class: 'filter' }, h('label', { for: id }, label), control);
  const form = h('form', { class: 'filter-bar', testid: 'access-log-form' },
    field('access-tenant', 'Tenant', tenant),
    field('access-actor', 'Actor', actor),
    field('access-action', 'Action', action),
    actions,
    field('access-outcome', 'Outcome', outcome),
    field('access-since', 'Since (UTC)', since),
    h('div', { class: 'filter filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'access-apply' }, 'Filter'),
      h('a', { href: '/admin/access-log', class: 'btn' }, 'Reset')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate(`/admin/access-log${api.query({
      tenant: tenant.value.trim(), actor: actor.value.trim(), action: action.value.trim(), outcome: outcome.value, since: fmt.fromInput(since.value),
    })}`);
  });
  const box = h('div');
  replace(ctx.main, pageHeader('Access log'), form, section('Entries', { testid: 'access-log' }, box));
  load(box, 'the access log', api.get(`/api/v1/access-log${api.query(Object.assign({ limit: LIMIT }, f))}`, ctx.signal), (data) => {
    replace(actions, (Array.isArray(data.actions) ? data.actions : []).map((a) => h('option', { value: a })));
    const entries = Array.isArray(data.entries) ? data.entries : [];
    if (entries.length === 0) {
      return empty('No access-log entries match.', 'access-empty');
    }
    return [
      entries.length >= LIMIT ? h('p', { class: 'hint' }, `The newest ${LIMIT} entries are shown; narrow the filters to see older ones.`) : null,
      table({ testid: 'access-log-table' }, ['At (UTC)', 'Actor', 'Role', 'Action', 'Tenant', 'Trace', 'Object', 'Reason', 'Outcome', 'Detail'],
        entries.map((e) => h('tr', { testid: 'access-row', class: e.outcome === 'allowed' ? null : 'row-warn' },
          td(timeEl(e.at), { field: 'at' }),
          td(e.actor, { field: 'actor' }),
          td(e.role, { field: 'role' }),
          td(e.action, { field: 'action' }),
          td(e.tenant, { field: 'tenant' }),
          td(e.trace_id ? complaintLink(e.trace_id, `${e.trace_id.slice(0, 12)}…`, { title: e.trace_id }) : '', { field: 'trace_id' }),
          td(e.ref ? h('code', { class: 'ref' }, e.ref) : '', { field: 'ref', class: 'wrap' }),
          td(e.reason, { field: 'reason', class: 'wrap' }),
          td(e.outcome, { field: 'outcome' }),
          td(e.detail, { field: 'detail', class: 'wrap' })))),
    ];
  });
}
