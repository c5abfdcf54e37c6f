// Complaint lookup: a trace ID, a provider response ID or an end-user
// reference. One trace found opens its evidence; several are listed.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { load, pageHeader, table, td, num, n, complaintLink, complaintPath, timeEl, statusBadge, empty } from '../ui.js';
import * as fmt from '../format.js';

const LIMIT = 50;

const KIND_NAMES = {
  trace_id: 'trace ID',
  response_id: 'provider response ID',
  end_user: 'end-user reference',
};

export default function lookup(ctx) {
  const q = (ctx.query.get('q') || '').trim();
  const from = ctx.query.get('from') || '';
  const to = ctx.query.get('to') || '';
  const input = h('input', {
    id: 'search-q', name: 'q', type: 'search', required: true, value: q, testid: 'search-input', class: 'wide',
    placeholder: 'trace ID, response ID or end-user reference', 'aria-label': 'trace ID, response ID or end-user reference',
    autocomplete: 'off', spellcheck: 'false',
  });
  const fromInput = h('input', { id: 'search-from', name: 'from', type: 'datetime-local', value: fmt.toInput(from), testid: 'search-from' });
  const toInput = h('input', { id: 'search-to', name: 'to', type: 'datetime-local', value: fmt.toInput(to), testid: 'search-to' });
  const form = h('form', { class: 'search-form', testid: 'search-form', role: 'search' },
    h('div', { class: 'search-row' }, input, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'search-button' }, 'Search')),
    h('div', { class: 'filters' },
      h('label', { for: 'search-from' }, 'From (UTC)'), fromInput,
      h('label', { for: 'search-to' }, 'To (UTC)'), toInput),
    h('p', { class: 'hint' }, 'A trace ID is 32 hex digits. Response IDs and end-user references must match exactly; end-user references are searched in the last 30 days unless you give a range.'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate(`/${api.query({ q: input.value.trim(), from: fmt.fromInput(fromInput.value), to: fmt.fromInput(toInput.value) })}`);
  });
  const results = h('div', { class: 'results' });
  replace(ctx.main, pageHeader('Find a complaint'), h('section', { class: 'panel' }, form), results);
  if (!q) {
    input.focus();
    return;
  }
  load(results, 'search results', api.get(`/api/v1/search${api.query({ q, from, to, limit: LIMIT })}`, ctx.signal), (data) => {
    const calls = Array.isArray(data.results) ? data.results : [];
    const traces = [...new Set(calls.map((c) => c.trace_id))];
    if (traces.length === 1) {
      // The search entry is replaced, so Back returns to the empty form.
      queueMicrotask(() => navigate(complaintPath(traces[0]), { replace: true }));
      return h('p', { class: 'loading' }, 'Opening the complaint…');
    }
    const kind = KIND_NAMES[data.kind] || data.kind || 'query';
    if (calls.length === 0) {
      return empty(`No calls found for this ${kind} in the tenants you can see.`, 'search-empty');
    }
    return h('section', { class: 'panel' },
      h('h2', null, `${fmt.plural(calls.length, 'call')} in ${fmt.plural(traces.length, 'trace')} match this ${kind}`),
      calls.length >= LIMIT ? h('p', { class: 'hint' }, `Only the first ${LIMIT} are shown: narrow the time range to see the rest.`) : null,
      table({ testid: 'search-results' },
        ['Start (UTC)', 'Trace', 'Tenant', 'Service', 'Operation', 'Model', 'Status', n('Input tokens'), n('Output tokens'), n('Cost'), 'End user'],
        calls.map((c) => h('tr', { testid: 'search-row' },
          td(timeEl(c.start_time)),
          td(complaintLink(c.trace_id, `${c.trace_id.slice(0, 12)}…`, { testid: 'search-link', title: c.trace_id })),
          td(c.tenant), td(c.service_name), td(c.operation),
          td(c.response_model || c.request_model),
          td(statusBadge(c.status, c.error_class)),
          num(fmt.count(c.input_tokens)), num(fmt.count(c.output_tokens)),
          num(fmt.costWithStatus(c.cost_usd, c.cost_status)),
          td(c.end_user_ref)))));
  });
}
