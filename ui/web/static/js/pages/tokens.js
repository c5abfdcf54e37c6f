// API tokens of service accounts (integrations: ticketing, SIEM, the CLI
// against a running instance). Admins create them with roles per tenant,
// see each secret once, and revoke them; only hashes are stored.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { load, pageHeader, section, dl, table, td, timeEl, empty, onSubmit, copyButton, fail } from '../ui.js';
import * as fmt from '../format.js';

export default function tokens(ctx) {
  const listBox = h('div');
  const created = h('div');
  const reload = () => load(listBox, 'API tokens', api.get('/api/v1/tokens', ctx.signal), (data) => tokenTable(ctx, data, reload));
  replace(ctx.main,
    pageHeader('API tokens'),
    section('Create a token', { testid: 'token-create' }, createForm(ctx, created, reload), created),
    section('Tokens', { testid: 'tokens' }, listBox));
  reload();
}

function tokenTable(ctx, data, reload) {
  const list = Array.isArray(data.tokens) ? data.tokens : [];
  if (list.length === 0) {
    return empty('No API tokens yet.', 'tokens-empty');
  }
  const rows = list.slice().reverse().map((tok) => {
    const revoke = tok.status === 'active'
      ? h('button', { type: 'button', class: 'btn btn-small btn-danger', testid: 'token-revoke' }, 'Revoke')
      : null;
    if (revoke) {
      revoke.addEventListener('click', async () => {
        revoke.disabled = true;
        try {
          await api.post(`/api/v1/tokens/${encodeURIComponent(tok.id)}/revoke`, {}, ctx.signal);
          reload();
        } catch (e) {
          revoke.disabled = false;
          fail(e);
        }
      });
    }
    return h('tr', { testid: 'token-row', 'data-token-id': tok.id, 'data-status': tok.status },
      td(`service:${tok.name}`, { field: 'name' }),
      td(fmt.grantsText(tok.grants), { field: 'grants' }),
      td(tok.status, { field: 'status' }),
      td(timeEl(tok.expires_at), { field: 'expires_at' }),
      td(tok.last_used_at ? timeEl(tok.last_used_at) : 'never', { field: 'last_used_at' }),
      td(`${tok.created_by} at ${fmt.time(tok.created_at)}`, { field: 'created' }),
      td(tok.id, { class: 'mono', field: 'id' }),
      td(revoke));
  });
  return table({ testid: 'tokens-table' }, ['Service account', 'Grants', 'Status', 'Expires (UTC)', 'Last used (UTC)', 'Created', 'Token ID', ''], rows);
}

function createForm(ctx, created, reload) {
  const input = (name, props) => h('input', Object.assign({ id: `token-${name}`, name, testid: `token-${name}`, autocomplete: 'off' }, props));
  const name = input('name', { required: true, pattern: '[a-z0-9][a-z0-9._\\-]{0,63}', placeholder: 'ticketing', title: 'lower-case letters, digits, . _ -' });
  const tenant = input('tenant', { required: true, placeholder: 'acme, or * for every tenant' });
  const role = h('select', { id: 'token-role', name: 'role', testid: 'token-role' },
    ['viewer', 'auditor', 'admin'].map((r) => h('option', { value: r }, r)));
  const days = input('days', { type: 'number', min: 1, max: 366, value: 90, required: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'token-submit' }, 'Create token');
  const row = (id, label, control) => h('div', { class: 'form-row' }, h('label', { for: `token-${id}` }, label), control);
  const form = h('form', { class: 'stack', testid: 'token-form' },
    row('name', 'Service account name (acts as service:NAME)', name),
    h('div', { class: 'form-pair' }, row('tenant', 'Tenant', tenant), row('role', 'Role', role)),
    row('days', 'Expires in (days)', days),
    h('div', { class: 'actions' }, submit));
  onSubmit(form, submit, async () => {
    const res = await api.post('/api/v1/tokens', {
      name: name.value.trim(),
      grants: { [tenant.value.trim()]: role.value },
      expires_in_days: Number(days.value),
    }, ctx.signal);
    const secret = h('input', { readonly: true, value: res.token, class: 'mono wide', testid: 'token-secret', 'aria-label': 'API token' });
    replace(created, h('div', { class: 'result', testid: 'token-result' },
      h('h3', null, `Token for service:${res.record.name}`),
      h('p', null, 'Copy it now: it is shown only once and stored only as a hash. Send it as "Authorization: Bearer …", or set DOCKET_TOKEN for the docket CLI.'),
      h('div', { class: 'form-row' }, secret, copyButton(res.token, secret)),
      dl([
        ['Grants', 'grants', fmt.grantsText(res.record.grants)],
        ['Expires', 'expires_at', fmt.time(res.record.expires_at)],
      ])));
    form.reset();
    reload();
  });
  return form;
}
