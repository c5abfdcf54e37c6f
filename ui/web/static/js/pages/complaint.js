// The evidence for one complaint (one trace): every LLM call with its
// metadata, content behind a reasoned reveal, lifecycle state, retrieved
// documents, database queries, a timeline and recorded replays.
//
// Stored content may be hostile (markup, script, links): it is only ever
// put into the page as text.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { load, pageHeader, section, dl, table, td, num, n, timeEl, statusBadge, copyButton, complaintPath, empty, onSubmit, fail } from '../ui.js';
import * as charts from '../charts.js';
import * as fmt from '../format.js';

const NR = fmt.NOT_REPORTED;

const CONTENT_LABELS = {
  input: 'Input',
  output: 'Output',
  system_instructions: 'System instructions',
  tool_definitions: 'Tool definitions',
  linked: 'Other content of this call (span events, log records)',
};

export default function complaint(ctx) {
  const traceId = ctx.params[0];
  const permalink = `${location.origin}${complaintPath(traceId)}`;
  const linkInput = h('input', { class: 'permalink mono', readonly: true, value: permalink, testid: 'permalink', 'aria-label': 'Permalink' });
  const body = h('div', { class: 'evidence' });
  replace(ctx.main,
    pageHeader(['Complaint ', h('code', { class: 'trace-id', testid: 'trace-id' }, traceId)],
      h('div', { class: 'permalink-box' }, linkInput, copyButton(permalink, linkInput, { testid: 'copy-permalink' }))),
    body);
  // reload shows the evidence again, as after a replay started here ends.
  const reload = () => load(body, 'the evidence', api.get(`/api/v1/evidence/${encodeURIComponent(traceId)}`, ctx.signal), (ev) => evidence(ctx, ev, reload));
  reload().then(() => {
    // A permalink to one call (#call-<span_id>) can only scroll once the
    // cards exist.
    const target = location.hash.length > 1 ? document.getElementById(location.hash.slice(1)) : null;
    if (target) {
      target.scrollIntoView();
    }
  });
}

function evidence(ctx, ev, reload) {
  const calls = Array.isArray(ev.calls) ? ev.calls : [];
  const spans = Array.isArray(ev.evidence_spans) ? ev.evidence_spans : [];
  const timeline = Array.isArray(ev.timeline) ? ev.timeline : [];
  const replays = Array.isArray(ev.replays) ? ev.replays : [];
  const conflicts = Array.isArray(ev.conflicts) ? ev.conflicts : [];
  return [
    summary(ev, calls, timeline),
    conflictsNotice(conflicts, calls),
    h('section', { class: 'calls', testid: 'calls' },
      h('h2', null, `LLM calls (${calls.length})`),
      calls.length === 0 ? empty('This trace has no LLM calls in the ledger.') : calls.map((c, i) => callCard(ctx, ev, c, i, calls.length))),
    requestPath(timeline),
    retrievals(spans.filter((sp) => sp.category === 'retrieval')),
    dbQueries(spans.filter((sp) => sp.category === 'db')),
    spanContent(ctx, ev, spans),
    timelineSection(timeline),
    replaysSection(ctx, ev, replays, calls, reload),
  ];
}

// summary is the bar above the calls: how many, what they cost, how many
// tokens, over what time.
function summary(ev, calls, timeline) {
  const t = ev.totals || {};
  // A token total is marked +? when some call did not report its count.
  const tokens = (key) => fmt.partialCount(t[key], calls.map((c) => c[key]));
  const starts = [...calls.map((c) => c.start_time), ...timeline.map((sp) => sp.start_time)].map(fmt.timeValue).filter((v) => !Number.isNaN(v));
  const ends = [...calls.map((c) => c.end_time), ...timeline.map((sp) => sp.end_time)].map(fmt.timeValue).filter((v) => !Number.isNaN(v));
  let range = NR;
  if (starts.length > 0 && ends.length > 0) {
    const a = Math.min(...starts);
    const b = Math.max(...ends);
    range = `${fmt.time(new Date(a).toISOString())} → ${fmt.time(new Date(b).toISOString())} (${fmt.ms(b - a)})`;
  }
  const item = (label, field, value) => h('div', { class: 'stat' }, h('span', { class: 'stat-label' }, label), h('span', { class: 'stat-value', field }, value));
  return h('section', { class: 'summary', testid: 'summary' },
    item('Calls', 'calls', fmt.count(t.calls !== undefined ? t.calls : calls.length)),
    item('Total cost', 'total_cost', fmt.totalCost(t.cost_usd, Number(t.cost_unknown_calls) || 0)),
    Number(t.cost_unknown_calls) > 0 ? item('Unknown cost', 'cost_unknown_calls', fmt.plural(t.cost_unknown_calls, 'call')) : null,
    item('Input tokens', 'total_input_tokens', tokens('input_tokens')),
    item('Output tokens', 'total_output_tokens', tokens('output_tokens')),
    item('Time range (UTC)', 'time_range', range));
}

function orNone(v) {
  return v === null || v === undefined || v === '' ? 'none' : String(v);
}

function orNR(v) {
  return v === null || v === undefined || v === '' ? NR : String(v);
}

function params(map) {
  const entries = map && typeof map === 'object' ? Object.entries(map) : [];
  if (entries.length === 0) {
    return 'none';
  }
  return h('ul', { class: 'kv' }, entries.sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => h('li', null, h('span', { class: 'mono' }, k), ` = ${v}`)));
}

function callCard(ctx, ev, c, i, total) {
  const model = c.response_model || c.request_model || 'unknown model';
  const group = (title, rows) => h('div', { class: 'field-group' }, h('h4', null, title), dl(rows));
  const head = h('div', { class: 'card-head' },
    h('h3', null, `Call ${i + 1} of ${total}: `, h('span', { class: 'mono' }, `${c.operation || 'call'} ${model}`)),
    statusBadge(c.status, c.error_class),
    h('span', { class: 'muted mono' }, `span ${c.span_id}`));
  const issues = Array.isArray(c.attribute_issues) && c.attribute_issues.length > 0
    ? h('p', { class: 'callout callout-warn', testid: 'attribute-issues' }, `Attribute issues: ${c.attribute_issues.join(', ')}`)
    : null;
  return h('article', { class: 'card call', testid: 'call', id: `call-${c.span_id}`, 'data-span-id': c.span_id },
    head,
    issues,
    h('div', { class: 'field-groups' },
      group('Call', [
        ['Tenant', 'tenant', orNR(c.tenant)],
        ['Service', 'service_name', orNR(c.service_name)],
        ['Operation', 'operation', orNR(c.operation)],
        ['Provider', 'provider', orNR(c.provider)],
        ['Request model', 'request_model', orNR(c.request_model)],
        ['Response model', 'response_model', orNR(c.response_model)],
        ['Response ID', 'response_id', orNR(c.response_id)],
        ['End user', 'end_user_ref', orNR(c.end_user_ref)],
        // Other spans of the trace describing this same provider call (a
        // second instrumentation, a wrapper), merged into this row.
        ['Also traced as', 'evidence_span_ids', Array.isArray(c.evidence_span_ids) && c.evidence_span_ids.length > 0
          ? h('span', { class: 'mono' }, c.evidence_span_ids.map((s) => `span ${s}`).join(', '))
          : 'none'],
      ]),
      group('Timing and outcome', [
        ['Start (UTC)', 'start_time', timeEl(c.start_time)],
        ['Latency', 'duration_ms', fmt.ms(c.duration_ms)],
        ['Time to first token', 'ttft_ms', fmt.ms(c.ttft_ms)],
        ['Finish reasons', 'finish_reasons', fmt.list(c.finish_reasons, NR)],
        ['Status', 'status', orNR(c.status)],
        ['Error class', 'error_class', orNone(c.error_class)],
        ['Error type', 'error_type', orNone(c.error_type)],
        ['HTTP status', 'http_status', fmt.number(c.http_status)],
        ['Retry attempt', 'retry_attempt', fmt.number(c.retry_attempt)],
      ]),
      group('Sampling', [
        ['Temperature', 'temperature', fmt.number(c.temperature)],
        ['Top p', 'top_p', fmt.number(c.top_p)],
        ['Top k', 'top_k', fmt.number(c.top_k)],
        ['Max tokens', 'max_tokens', fmt.number(c.max_tokens)],
        ['Seed', 'seed', fmt.number(c.seed)],
        ['Stop sequences', 'stop_sequences', Array.isArray(c.stop_sequences) && c.stop_sequences.length > 0
          ? h('ul', { class: 'kv' }, c.stop_sequences.map((sq) => h('li', { class: 'mono' }, JSON.stringify(sq))))
          : 'none'],
        ['Other parameters', 'request_params', params(c.request_params)],
      ]),
      group('Usage and cost', [
        ['Input tokens', 'input_tokens', fmt.count(c.input_tokens)],
        ['Output tokens', 'output_tokens', fmt.count(c.output_tokens)],
        ['Cache read tokens', 'cache_read_tokens', fmt.count(c.cache_read_tokens)],
        ['Cache write tokens', 'cache_write_tokens', fmt.count(c.cache_write_tokens)],
        ['Reasoning tokens', 'reasoning_tokens', fmt.count(c.reasoning_tokens)],
        ['Usage source', 'usage_source', orNR(c.usage_source)],
        ['Cost', 'cost_usd', fmt.costWithStatus(c.cost_usd, c.cost_status)],
        ['Cost status', 'cost_status', orNR(c.cost_status)],
        ['Price', 'price_ref', orNR(c.price_ref)],
      ])),
    contentSection(ctx, ev, c),
    lifecycle(c.state));
}

// contentSection lists the call's content items. Each is revealed only on
// request, with a reason that goes into the access log.
function contentSection(ctx, ev, c) {
  const items = Array.isArray(c.content) ? c.content : [];
  const role = fmt.roleFor(ctx.session.grants, c.tenant) || 'none';
  return h('div', { class: 'content-section', testid: 'content' },
    h('h4', null, 'Content'),
    dl([['Content status', 'content_status', orNR(c.content_status)], ['Content size', 'content_bytes', c.content_bytes === null || c.content_bytes === undefined ? NR : `${fmt.count(c.content_bytes)} bytes`]]),
    items.length === 0
      ? empty('The server listed no content items for this call.')
      : h('ul', { class: 'content-items' }, items.map((item) => contentItem(ctx, ev, item, role))));
}

function contentItem(ctx, ev, item, role) {
  const label = CONTENT_LABELS[item.field] || item.field || 'content';
  const li = h('li', { class: 'content-item', testid: 'content-item', 'data-content-field': item.field || '' },
    h('div', { class: 'content-head' },
      h('strong', null, label),
      item.ref ? h('code', { class: 'ref', testid: 'content-ref' }, item.ref) : h('span', { class: 'muted' }, 'no reference')));
  if (!item.available) {
    li.append(h('p', { class: 'why-not', testid: 'why-not' }, `Not available: ${item.why_not || 'no reason recorded'}`));
    return li;
  }
  if (!ev.can_reveal) {
    li.append(h('p', { class: 'muted', testid: 'reveal-denied' }, `Your role (${role}) cannot reveal content.`));
    return li;
  }
  const slot = h('div', { class: 'reveal-slot' });
  const button = h('button', { type: 'button', class: 'btn btn-small', testid: 'reveal-button' }, 'Reveal');
  button.addEventListener('click', () => {
    button.hidden = true;
    replace(slot, revealForm(ctx, ev, item, () => {
      replace(slot);
      button.hidden = false;
      button.focus();
    }));
  });
  li.querySelector('.content-head').append(button);
  li.append(slot);
  return li;
}

// spanContent lists the content on other spans of the trace (a tool call's
// arguments, a document's text, a workflow's input), revealed as a call's
// content is.
function spanContent(ctx, ev, spans) {
  const withRefs = spans.filter((sp) => Array.isArray(sp.content_refs) && sp.content_refs.length > 0);
  if (withRefs.length === 0) {
    return null;
  }
  return h('section', { class: 'span-content', testid: 'span-content' },
    h('h2', null, `Content on other spans (${withRefs.length})`),
    h('ul', { class: 'content-items' }, withRefs.flatMap((sp) => {
      const role = fmt.roleFor(ctx.session.grants, sp.tenant) || 'none';
      return sp.content_refs.map((ref) => contentItem(ctx, ev, { field: `${sp.span_name} · ${refKind(ref)}`, ref, available: true }, role));
    })));
}

// refKind is the kind of content a reference names:
// docket-content://<tenant>/<kind>/<digest>.
function refKind(ref) {
  const parts = String(ref).split('/');
  return parts.length === 5 ? parts[3] : 'content';
}

// requiredReason is the reason typed in the field, or '' after telling
// the person that one is required.
function requiredReason(field) {
  const why = field.value.trim();
  if (!why) {
    field.setCustomValidity('A reason is required.');
    field.reportValidity();
  }
  return why;
}

function revealForm(ctx, ev, item, close) {
  const reason = h('textarea', {
    name: 'reason', required: true, maxlength: 1000, rows: 2, testid: 'reveal-reason', class: 'wide',
    placeholder: 'ticket 4711: customer says the answer quoted a wrong price',
  });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'reveal-submit' }, 'Reveal content');
  const cancel = h('button', { type: 'button', class: 'btn', testid: 'reveal-cancel', onclick: close }, 'Cancel');
  const id = `reason-${Math.random().toString(36).slice(2)}`;
  reason.id = id;
  const form = h('form', { class: 'reveal-form', testid: 'reveal-form' },
    h('label', { for: id }, 'Why do you need to see this content? The reason is recorded in the access log with your name.'),
    reason,
    h('div', { class: 'actions' }, submit, cancel));
  onSubmit(form, submit, async () => {
    const why = requiredReason(reason);
    if (!why) {
      return;
    }
    const res = await api.post('/api/v1/reveal', { trace_id: ev.trace_id, ref: item.ref, reason: why }, ctx.signal);
    const content = typeof res.content === 'string' ? res.content : '';
    const pre = h('pre', { class: 'content-text', testid: 'reveal-content' });
    // Text only: whatever the content holds stays characters on screen.
    pre.textContent = fmt.pretty(content);
    const hide = h('button', { type: 'button', class: 'btn btn-small', testid: 'reveal-hide', onclick: close }, 'Hide');
    replace(form.parentNode || form,
      h('div', { class: 'revealed', testid: 'revealed' },
        h('div', { class: 'revealed-meta' },
          h('span', null, `${res.content_type || 'unknown type'} · ${fmt.count(content.length)} characters · revealed ${fmt.time(new Date().toISOString())}, recorded in the access log`),
          hide),
        pre));
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  queueMicrotask(() => reason.focus());
  return form;
}

function lifecycle(state) {
  if (!state || typeof state !== 'object') {
    return h('div', { class: 'lifecycle', testid: 'lifecycle' }, h('h4', null, 'Lifecycle'), empty('No lifecycle state was sent for this call.'));
  }
  const ids = (list, href) => (Array.isArray(list) && list.length > 0
    ? h('ul', { class: 'inline-list' }, list.map((id) => h('li', null, h('a', { href: href(id), class: 'mono' }, id))))
    : 'none');
  const objects = Array.isArray(state.objects) ? state.objects.filter((o) => o && Array.isArray(o.events) && o.events.length > 0) : [];
  return h('div', { class: 'lifecycle', testid: 'lifecycle' },
    h('h4', null, 'Lifecycle'),
    dl([
      ['Content retained until', 'content_retained_until', timeEl(state.content_retained_until)],
      ['Ledger row retained until', 'ledger_retained_until', timeEl(state.ledger_retained_until)],
      ['Legal holds', 'hold_ids', ids(state.hold_ids, () => '/admin/holds')],
      ['Deletion requests', 'deletion_job_ids', ids(state.deletion_job_ids, (id) => `/admin/deletions${api.query({ job: id })}`)],
    ]),
    objects.length === 0 ? null : table({ testid: 'content-events' }, ['Object', 'Event', 'At (UTC)', 'Actor', 'Hold / job', 'Detail'],
      objects.flatMap((o) => o.events.map((ev) => h('tr', null,
        td(h('code', { class: 'ref' }, o.ref), { class: 'wrap' }), td(ev.event), td(timeEl(ev.at)), td(ev.actor),
        td([ev.hold_id, ev.job_id].filter(Boolean).join(' ')), td(ev.detail, { class: 'wrap' }))))));
}

function retrievals(spans) {
  return section('Retrieved documents', { testid: 'retrievals' },
    spans.length === 0 ? empty('No retrieval steps are recorded for this trace.') : spans.map((sp) => {
      const docs = Array.isArray(sp.documents) ? sp.documents : [];
      return h('div', { class: 'sub', testid: 'retrieval' },
        h('div', { class: 'sub-head' },
          h('strong', null, sp.span_name || 'retrieval'),
          h('span', { class: 'muted' }, ` ${sp.service_name || ''} · source `, h('span', { class: 'mono', field: 'data_source_id' }, sp.data_source_id || NR), ` · ${fmt.time(sp.start_time)}`),
          statusBadge(sp.status)),
        docs.length === 0 ? empty('No document IDs were reported.') : table({ testid: 'documents' }, ['Document ID', 'Version', n('Score')],
          docs.map((d) => h('tr', { testid: 'document' },
            td(d.id || NR, { class: 'mono wrap', field: 'document_id' }),
            td(d.version || NR, { class: 'mono', field: 'document_version' }),
            num(fmt.number(d.score))))));
    }));
}

const QUERY_STATUS = {
  sanitized: 'sanitized (literals replaced)',
  partial: 'partially sanitized',
  not_stored_unsanitized: 'not stored: the text was not sanitized and may hold literals',
  absent: 'no query text was reported',
};

function dbQueries(spans) {
  return section('Database queries', { testid: 'db-queries' },
    spans.length === 0 ? empty('No database queries are recorded for this trace.') : spans.map((sp) => {
      const text = typeof sp.db_query_text === 'string' ? sp.db_query_text : null;
      const pre = text !== null ? h('pre', { class: 'query-text', testid: 'db-query-text' }) : null;
      if (pre) {
        pre.textContent = text;
      }
      return h('div', { class: 'sub', testid: 'db-query' },
        h('div', { class: 'sub-head' },
          h('strong', null, sp.span_name || 'query'),
          h('span', { class: 'muted' }, ` ${sp.service_name || ''} · ${fmt.time(sp.start_time)}`),
          statusBadge(sp.status)),
        dl([
          ['System', 'db_system', orNR(sp.db_system)],
          ['Operation', 'db_operation', orNR(sp.db_operation)],
          ['Collection', 'db_collection', orNR(sp.db_collection)],
          ['Query text', 'db_query_status', QUERY_STATUS[sp.db_query_status] || orNR(sp.db_query_status)],
        ], { class: 'fields fields-inline' }),
        pre);
    }));
}

const PATH_STEPS = { request: 'HTTP request', queue: 'queue', worker: 'worker', db: 'database', retrieval: 'retrieval', llm: 'LLM call' };

// requestPath lists the user's request as it went through the system, in
// time order: HTTP request → queue → worker → database → retrieval → LLM
// call. Only route, method, status and messaging destination were kept of
// the request spans; never the URL's query, headers or bodies.
function requestPath(timeline) {
  const steps = timeline.filter((sp) => PATH_STEPS[sp.kind]);
  if (!steps.some((sp) => sp.kind === 'request' || sp.kind === 'queue' || sp.kind === 'worker')) {
    return null;
  }
  return section('Request path', { testid: 'request-path' },
    h('p', { class: 'hint' }, 'The user\'s request: route, method, status and queue only; query strings, headers and bodies are never kept.'),
    table({ testid: 'request-path-rows' }, ['Step', 'Span', 'Service', 'Details', 'Starts', 'Duration', 'Status'],
      steps.map((sp) => h('tr', { testid: `path-${sp.kind}` },
        td(PATH_STEPS[sp.kind]),
        td(sp.name || NR),
        td(sp.service_name || NR),
        td(sp.detail || ''),
        td(`+${fmt.ms(Number(sp.offset_ms) || 0)}`),
        td(fmt.ms(Number(sp.duration_ms) || 0)),
        td(statusBadge(sp.status))))));
}

function timelineSection(spans) {
  if (spans.length === 0) {
    return section('Timeline', { testid: 'timeline' }, empty('No spans of this trace are recorded.'));
  }
  const { svg, truncated } = charts.timeline(spans);
  return section('Timeline', { testid: 'timeline' },
    h('p', { class: 'legend' },
      h('span', { class: 'key key-request' }), 'HTTP request ',
      h('span', { class: 'key key-queue' }), 'queue ',
      h('span', { class: 'key key-worker' }), 'worker ',
      h('span', { class: 'key key-llm' }), 'LLM call ',
      h('span', { class: 'key key-db' }), 'database ',
      h('span', { class: 'key key-retrieval' }), 'retrieval ',
      h('span', { class: 'key key-other' }), 'other ',
      h('span', { class: 'key key-error' }), 'error'),
    h('div', { class: 'chart-box' }, svg),
    truncated > 0 ? h('p', { class: 'hint' }, `${truncated} more spans are not drawn.`) : null);
}

// conflictsNotice tells that rows arrived again under a recorded key with
// other content: what the page shows is what was recorded first, and the
// later versions were kept aside, never applied.
function conflictsNotice(conflicts, calls) {
  if (conflicts.length === 0) {
    return null;
  }
  const callNo = new Map(calls.map((c, i) => [c.span_id, i + 1]));
  return section('Rewrite attempts', { testid: 'conflicts', class: 'panel conflicts' },
    h('p', null, `${fmt.plural(conflicts.length, 'row')} of this trace arrived again with different content. `
      + 'The rows on this page are the ones first recorded; the later versions were not applied.'),
    table({ testid: 'conflict-rows' }, ['Row', 'Sent by (service)', 'Tenant', 'Received (UTC)', 'Recorded row hash', 'Received row hash'],
      conflicts.map((c) => h('tr', null,
        td(c.source === 'llm_calls' && callNo.has(c.span_id) ? `call ${callNo.get(c.span_id)} (span ${c.span_id})` : `span ${c.span_id}`),
        td(c.conflicting_service || NR),
        td(c.tenant),
        td(timeEl(c.received_at)),
        td(h('code', null, String(c.original_hash).slice(0, 16))),
        td(h('code', null, String(c.conflicting_hash).slice(0, 16)))))));
}

function replaysSection(ctx, ev, records, calls, reload) {
  const callNo = new Map(calls.map((c, i) => [c.span_id, i + 1]));
  return section('Replays', { testid: 'replays' },
    records.length === 0 ? empty('This trace has not been replayed.') : records.map((r) => replay(r, callNo)),
    ev.can_reveal && calls.length > 0 ? replayStarter(ctx, ev, calls, reload) : null);
}

// replayStarter offers a distribution replay of one call: N, a budget and
// a reason (recorded, as for a reveal). The run goes on in the server; the
// page follows its progress and shows the evidence again when it ends.
function replayStarter(ctx, ev, calls, reload) {
  const slot = h('div', { class: 'sub replay-start', testid: 'replay-start' });
  api.get('/api/v1/replays/limits', ctx.signal).then((limits) => {
    if (!limits || !limits.enabled) {
      replace(slot, h('p', { class: 'muted' }, 'Replay is not enabled for this UI.'));
      return;
    }
    replace(slot, replayForm(ctx, ev, calls, limits, reload));
  }, (e) => {
    if (!api.isAbort(e)) {
      replace(slot, h('p', { class: 'muted' }, `Replay is not available: ${e.message}`));
    }
  });
  return slot;
}

function replayForm(ctx, ev, calls, limits, reload) {
  const uid = Math.random().toString(36).slice(2);
  const field = (label, input) => {
    input.id = `${input.name}-${uid}`;
    return h('div', { class: 'form-field' }, h('label', { for: input.id }, label), input);
  };
  const call = h('select', { name: 'call', testid: 'replay-call' },
    calls.map((c, i) => h('option', { value: c.span_id }, `Call ${i + 1}: ${c.response_model || c.request_model || 'unknown model'} (span ${c.span_id})`)));
  const count = h('input', { name: 'n', type: 'number', min: 1, max: limits.max_n, value: Math.min(10, limits.max_n), required: true, testid: 'replay-n' });
  const budget = h('input', { name: 'budget', type: 'text', inputmode: 'decimal', required: true, value: limits.max_cost_usd, testid: 'replay-budget' });
  const reason = h('textarea', {
    name: 'reason', required: true, maxlength: 1000, rows: 2, class: 'wide', testid: 'replay-reason',
    placeholder: 'ticket 4711: is the answer the customer got reproducible?',
  });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'replay-submit' }, 'Start replay');
  const status = h('div', { class: 'replay-status', testid: 'replay-status', role: 'status' });
  const form = h('form', { class: 'reveal-form', testid: 'replay-form' },
    h('h4', null, 'Replay a call'),
    h('p', { class: 'muted' }, `Sends the call's stored input again N times (at most ${limits.max_n}) to the model that answered, within a budget in USD (at most $${limits.max_cost_usd}); a run ends after ${fmt.count(limits.timeout_seconds)} s. Each replay is a paid call; the reason is recorded in the access log with your name.`),
    calls.length > 1 ? field('Call', call) : null,
    field('N (replays)', count),
    field('Budget (USD)', budget),
    field('Reason', reason),
    h('div', { class: 'actions' }, submit),
    status);
  onSubmit(form, submit, async () => {
    const why = requiredReason(reason);
    if (!why) {
      return;
    }
    const spanId = calls.length > 1 ? call.value : calls[0].span_id;
    const run = await api.post('/api/v1/replays', { trace_id: ev.trace_id, span_id: spanId, n: Number(count.value), max_cost_usd: budget.value.trim(), reason: why }, ctx.signal);
    submit.hidden = true;
    await followRun(ctx, run, status);
    reload();
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  return form;
}

// followRun polls a run's status until it ends, showing its progress and
// a button that cancels it.
async function followRun(ctx, run, status) {
  const path = `/api/v1/replays/${encodeURIComponent(run.id)}`;
  const cancel = h('button', { type: 'button', class: 'btn btn-small', testid: 'replay-cancel' }, 'Cancel run');
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api.post(`${path}/cancel`, {}, ctx.signal);
    } catch (e) {
      fail(e);
    }
  });
  for (;;) {
    const p = run.progress || {};
    const text = `${run.state}: ${fmt.count(p.sent || 0)} of ${fmt.count(run.n)} replays sent, ${fmt.count(p.failed || 0)} failed`;
    replace(status, h('span', { testid: 'replay-progress', field: run.state }, text), run.state === 'running' ? cancel : null,
      run.error ? h('p', { class: 'callout callout-warn' }, run.error) : null);
    if (run.state !== 'running') {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    run = await api.get(path, ctx.signal);
  }
}

function replay(r, callNo) {
  const sum = fmt.replaySummary(r.report);
  const rows = [
    ['Run', 'run_id', orNR(r.run_id)],
    ['At (UTC)', 'at', timeEl(r.at)],
    ['Actor', 'actor', orNR(r.actor)],
    ['Purpose', 'purpose', orNone(r.purpose)],
    ['Call', 'span_id', callNo.has(r.span_id) ? `call ${callNo.get(r.span_id)} (span ${r.span_id})` : `span ${r.span_id}`],
    ['Model', 'response_model', `${r.provider || ''} ${r.response_model || ''}`.trim() || NR],
    ['Status', 'status', orNR(r.status)],
    ['Requested / completed', 'requested', `${fmt.count(r.requested)} / ${fmt.count(r.completed)}`],
    ['Exact matches', 'exact_matches', r.exact_matches === null || r.exact_matches === undefined ? 'not replayed' : fmt.rate(r.exact_matches, r.completed)],
  ];
  if (sum.known) {
    rows.push(
      ['Distinct outputs', 'distinct_outputs', sum.distinctOutputs === null ? NR : String(sum.distinctOutputs)],
      ['First divergence', 'first_divergence', sum.distinctOutputs === null ? NR : fmt.divergenceText(sum.divergence)],
      sum.tokenNote ? ['Tokens', 'token_note', sum.tokenNote] : null,
      ['Model lifecycle', 'lifecycle', sum.lifecycle || 'active'],
      sum.reason ? ['Reason', 'reason', sum.reason] : null,
      sum.failed ? ['Failed replays', 'failed', String(sum.failed)] : null,
      sum.firstError ? ['First error', 'first_error', sum.firstError] : null,
      ['Estimated cost per replay', 'estimated_cost_per_replay', sum.estimatedCost || fmt.UNKNOWN_COST]);
  }
  const variants = sum.known && sum.variants.length > 0
    ? table({ testid: 'replay-variants' }, [n('Count'), 'Matches original', 'First divergence'],
      sum.variants.map((v) => h('tr', null, num(fmt.count(v.count)), td(v.matches_original ? 'yes' : 'no'), td(v.matches_original ? '—' : fmt.divergenceText(v.divergence)))))
    : null;
  const changes = sum.known && sum.paramChanges.length > 0
    ? table({ testid: 'replay-param-changes' }, ['Parameter', 'Change', 'Recorded', 'Sent', 'Why'],
      sum.paramChanges.map((p) => h('tr', null, td(p.param, { class: 'mono' }), td(p.action), td(orNone(p.recorded)), td(orNone(p.sent)), td(p.reason, { class: 'wrap' }))))
    : null;
  const raw = h('pre', { class: 'query-text' });
  raw.textContent = typeof r.report === 'string' ? fmt.pretty(r.report) : JSON.stringify(r.report, null, 2);
  return h('div', { class: 'sub', testid: 'replay' },
    dl(rows, { class: 'fields fields-inline' }),
    sum.known ? null : h('p', { class: 'callout callout-warn' }, `The replay report has an unexpected shape (${sum.error}); its raw text is below.`),
    variants,
    changes,
    h('details', { open: sum.known ? null : true }, h('summary', null, 'Raw report'), raw));
}
