// The scope of a legal hold or a deletion request (lifecycle.Scope): one
// tenant, narrowed by end user, trace and/or a start-time range.

import { h } from './dom.js';
import * as api from './api.js';
import { fail } from './ui.js';
import * as fmt from './format.js';

// scopeFields returns the inputs and a read() giving the scope with empty
// parts left out (the server takes a missing time as an open end).
export function scopeFields(ctx, prefix) {
  const id = (name) => `${prefix}-${name}`;
  const input = (name, props) => h('input', Object.assign({ id: id(name), name, testid: id(name) }, props || {}));
  const listId = id('tenants');
  const tenant = input('tenant', { required: true, list: listId, autocomplete: 'off', placeholder: 'acme' });
  const endUser = input('end_user_ref', { maxlength: 1024, autocomplete: 'off', placeholder: 'any end user' });
  const trace = input('trace_id', { pattern: '[0-9a-fA-F]{32}', title: '32 hex digits', autocomplete: 'off', placeholder: 'any trace', class: 'mono' });
  const from = input('from', { type: 'datetime-local' });
  const to = input('to', { type: 'datetime-local' });
  const datalist = h('datalist', { id: listId });
  const tenants = Object.keys(ctx.session.grants || {}).filter((t) => t !== '*' && fmt.atLeast(ctx.session.grants[t], 'admin'));
  datalist.replaceChildren(...tenants.map((t) => h('option', { value: t })));
  if (fmt.roleFor(ctx.session.grants, '*') === 'admin') {
    api.get('/api/v1/facets', ctx.signal).then((f) => {
      const all = [...new Set([...tenants, ...((f && Array.isArray(f.tenants)) ? f.tenants : [])])].sort();
      datalist.replaceChildren(...all.map((t) => h('option', { value: t })));
    }, fail);
  }
  const row = (name, label, control) => h('div', { class: 'form-row' }, h('label', { for: id(name) }, label), control);
  const nodes = [
    row('tenant', 'Tenant', tenant), datalist,
    row('end_user_ref', 'End-user reference (optional)', endUser),
    row('trace_id', 'Trace ID (optional)', trace),
    h('div', { class: 'form-pair' }, row('from', 'Calls from (UTC, optional)', from), row('to', 'Calls before (UTC, optional)', to)),
  ];
  const read = () => {
    const scope = { tenant: tenant.value.trim() };
    if (endUser.value.trim()) {
      scope.end_user_ref = endUser.value.trim();
    }
    if (trace.value.trim()) {
      scope.trace_id = trace.value.trim().toLowerCase();
    }
    if (fmt.fromInput(from.value)) {
      scope.from = fmt.fromInput(from.value);
    }
    if (fmt.fromInput(to.value)) {
      scope.to = fmt.fromInput(to.value);
    }
    return scope;
  };
  return { nodes, read };
}

// scopeText describes a scope in one line.
export function scopeText(scope) {
  if (!scope || typeof scope !== 'object') {
    return fmt.NOT_REPORTED;
  }
  const parts = [`tenant ${scope.tenant || '?'}`];
  if (scope.end_user_ref) {
    parts.push(`end user ${scope.end_user_ref}`);
  }
  if (scope.trace_id) {
    parts.push(`trace ${scope.trace_id}`);
  }
  if (scope.from || scope.to) {
    parts.push(`calls ${scope.from ? fmt.time(scope.from) : '…'} → ${scope.to ? fmt.time(scope.to) : '…'}`);
  }
  return parts.join(' · ');
}

// reasonField is the required reason of a lifecycle action.
export function reasonField(id, testid, placeholder) {
  return h('textarea', { id, name: 'reason', required: true, maxlength: 1000, rows: 2, testid, class: 'wide', placeholder });
}
