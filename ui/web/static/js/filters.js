// The filter bar of the ledger views. Filters live in the page URL (so a
// filtered view is a permalink) in the API's own form: times as RFC 3339.

import { h } from './dom.js';
import * as api from './api.js';
import { navigate } from './router.js';
import { fail } from './ui.js';
import * as fmt from './format.js';

const SELECTS = [
  ['tenant', 'tenants', 'Tenant', 'All tenants'],
  ['service', 'services', 'Service', 'All services'],
  ['model', 'models', 'Model', 'All models'],
  ['provider', 'providers', 'Provider', 'All providers'],
  ['status', 'statuses', 'Status', 'All statuses'],
];

const FILTER_KEYS = ['tenant', 'service', 'model', 'provider', 'status', 'from', 'to'];

// readFilters takes the filters out of the page URL.
export function readFilters(query) {
  const out = {};
  for (const key of FILTER_KEYS) {
    out[key] = query.get(key) || '';
  }
  return out;
}

// options fills a select with "all" plus values, keeping the current value
// even when the list does not have it (an old permalink).
export function options(select, allLabel, values, current) {
  const list = Array.isArray(values) ? values.slice() : [];
  if (current && !list.includes(current)) {
    list.unshift(current);
  }
  select.replaceChildren(h('option', { value: '' }, allLabel),
    ...list.map((v) => h('option', { value: v, selected: v === current }, v)));
}

// filterBar builds the bar; extra are more labelled controls (name → URL
// parameter). Applying it navigates to path with the chosen filters, and
// the facets are filled in when they arrive.
export function filterBar(ctx, path, filters, extra) {
  const selects = SELECTS.map(([key, facet, label, all]) => {
    const select = h('select', { id: `filter-${key}`, name: key, testid: `filter-${key}` });
    options(select, all, [], filters[key]);
    return { key, facet, label, all, select };
  });
  const from = h('input', { id: 'filter-from', name: 'from', type: 'datetime-local', value: fmt.toInput(filters.from), testid: 'filter-from' });
  const to = h('input', { id: 'filter-to', name: 'to', type: 'datetime-local', value: fmt.toInput(filters.to), testid: 'filter-to' });
  const field = (id, label, control) => h('div', { class: 'filter' }, h('label', { for: id }, label), control);
  const form = h('form', { class: 'filter-bar', testid: 'filter-bar' },
    selects.map((f) => field(`filter-${f.key}`, f.label, f.select)),
    field('filter-from', 'From (UTC)', from),
    field('filter-to', 'To (UTC)', to),
    (extra || []).map(([id, label, control]) => field(id, label, control)),
    h('div', { class: 'filter filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'filter-apply' }, 'Apply'),
      h('a', { href: path, class: 'btn', testid: 'filter-reset' }, 'Reset')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = {};
    for (const f of selects) {
      params[f.key] = f.select.value;
    }
    params.from = fmt.fromInput(from.value);
    params.to = fmt.fromInput(to.value);
    for (const [, , control] of extra || []) {
      params[control.name] = control.value;
    }
    navigate(`${path}${api.query(params)}`);
  });
  api.get(`/api/v1/facets${api.query({ from: filters.from, to: filters.to })}`, ctx.signal).then((facets) => {
    for (const f of selects) {
      options(f.select, f.all, facets && facets[f.facet], filters[f.key]);
    }
  }, fail);
  return form;
}

// tenantStatusFilter is the filter bar of the admin lists: a tenant and a
// status (statuses: [value, label] pairs), kept in the URL of path.
export function tenantStatusFilter(prefix, path, tenant, status, statuses) {
  const tid = `${prefix}-filter-tenant`;
  const sid = `${prefix}-filter-status`;
  const t = h('input', { id: tid, name: 'tenant', value: tenant, placeholder: 'all tenants', testid: tid });
  const s = h('select', { id: sid, name: 'status', testid: sid },
    [['', 'Any status'], ...statuses].map(([v, l]) => h('option', { value: v, selected: v === status }, l)));
  const form = h('form', { class: 'filter-bar' },
    h('div', { class: 'filter' }, h('label', { for: tid }, 'Tenant'), t),
    h('div', { class: 'filter' }, h('label', { for: sid }, 'Status'), s),
    h('div', { class: 'filter filter-actions' }, h('button', { type: 'submit', class: 'btn' }, 'Filter')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate(`${path}${api.query({ tenant: t.value.trim(), status: s.value })}`);
  });
  return form;
}
