// Deletion requests: the content of the calls in a scope is deleted; the
// ledger rows stay with their hashes, metadata and this request on record.
// A job on a held object waits (blocked_by_hold) until the hold is released.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { load, fail, pageHeader, section, dl, table, td, num, n, timeEl, empty, flash, onSubmit } from '../ui.js';
import { scopeFields, scopeText, reasonField } from '../scope.js';
import { tenantStatusFilter } from '../filters.js';
import * as fmt from '../format.js';

const REFRESH_MS = 2000;
const ACTIVE = ['pending', 'running'];

export default function deletions(ctx) {
  const job = ctx.query.get('job');
  if (job) {
    detail(ctx, job);
    return;
  }
  const tenant = ctx.query.get('tenant') || '';
  const status = ctx.query.get('status') || '';
  const listBox = h('div');
  const retentionBox = h('div');
  replace(ctx.main,
    pageHeader('Deletion requests'),
    section('Requests', { testid: 'deletions' }, tenantStatusFilter('deletions', '/admin/deletions', tenant, status, Object.keys(STATUS_WORDS).map((v) => [v, v])), listBox),
    section('Request a deletion', { testid: 'deletion-create' }, createForm(ctx)),
    section('Retention runs', { testid: 'lifecycle' }, retentionBox));
  load(retentionBox, 'retention runs', api.get('/api/v1/lifecycle', ctx.signal), retentionView);
  load(listBox, 'deletion requests', api.get(`/api/v1/deletions${api.query({ tenant, status })}`, ctx.signal), (data) => {
    const jobs = Array.isArray(data.jobs) ? data.jobs : [];
    if (jobs.length === 0) {
      return empty('No deletion requests match.', 'deletions-empty');
    }
    return table({ testid: 'deletions-table' }, ['Job', 'Scope', 'Reason', 'Requested by', 'Requested (UTC)', 'Status', 'Progress'],
      jobs.map((j) => h('tr', { testid: 'deletion-row', 'data-job-id': j.job_id },
        td(h('a', { href: `/admin/deletions${api.query({ job: j.job_id })}`, class: 'mono', testid: 'deletion-link' }, j.job_id), { field: 'job_id' }),
        td(scopeText(j.scope), { field: 'scope', class: 'wrap' }),
        td(j.reason, { field: 'reason', class: 'wrap' }),
        td(j.requested_by, { field: 'requested_by' }),
        td(timeEl(j.requested_at), { field: 'requested_at' }),
        td(statusText(j), { field: 'status' }),
        td(progress(j.counts)))));
  });
}

const STATUS_WORDS = {
  pending: 'pending',
  running: 'running',
  blocked_by_hold: 'waiting for a legal hold to be released',
  done: 'done',
  failed: 'failed (retried in the background)',
};

function statusText(job) {
  return STATUS_WORDS[job.status] || job.status || fmt.NOT_REPORTED;
}

// progress shows how many of the matched objects are gone.
function progress(counts) {
  const c = counts || {};
  const matched = Number(c.objects_matched) || 0;
  const deleted = Number(c.objects_deleted) || 0;
  if (matched === 0) {
    return h('span', { class: 'muted' }, 'no objects matched yet');
  }
  return h('span', { class: 'progress-cell' },
    h('progress', { max: matched, value: Math.min(deleted, matched), testid: 'deletion-progress' }),
    ` ${fmt.count(deleted)} / ${fmt.count(matched)} deleted`);
}

const RUN_WORDS = {
  running: 'running',
  done: 'done',
  failed: 'failed',
  interrupted: 'interrupted (its process stopped)',
};

// retentionView shows the background lifecycle and the latest expiry runs.
function retentionView(data) {
  const r = data.runner;
  const runs = Array.isArray(data.expiry_runs) ? data.expiry_runs : [];
  const runner = r
    ? dl([
      ['Background runs', 'runner_interval', `every ${r.interval}, deletion requests not done first`],
      ['Now', 'runner_state', r.running ? 'running' : 'idle'],
      ['Next run (UTC)', 'runner_next', r.next_cycle ? timeEl(r.next_cycle) : 'not scheduled'],
      ['Last error', 'runner_error', r.last_error || 'none'],
    ], { testid: 'lifecycle-runner' })
    : h('p', { class: 'muted', testid: 'lifecycle-runner' }, 'Retention does not run in the background here; it runs with docket lifecycle expire.');
  return [runner,
    runs.length === 0 ? empty('No retention runs are recorded.', 'expiry-runs-empty') : table({ testid: 'expiry-runs-table' },
      ['Run', 'Started (UTC)', 'Tenants', 'Run by', 'Status', n('Objects expired'), n('Calls expired'), n('Held'), 'Error'],
      runs.map((x) => h('tr', { testid: 'expiry-run-row', 'data-run-id': x.run_id },
        td(h('code', null, x.run_id), { field: 'run_id' }),
        td(timeEl(x.started_at), { field: 'started_at' }),
        td(fmt.list(x.tenants, 'all'), { field: 'tenants' }),
        td(x.run_by, { field: 'run_by' }),
        td(`${RUN_WORDS[x.status] || x.status}${x.dry_run ? ' (dry run)' : ''}`, { field: 'status' }),
        num(fmt.count(x.objects_expired)),
        num(fmt.count(x.calls_expired)),
        num(fmt.count((Number(x.objects_held) || 0) + (Number(x.calls_held) || 0))),
        td(x.error || '', { class: 'wrap', field: 'error' })))),
  ];
}

function createForm(ctx) {
  const scope = scopeFields(ctx, 'deletion');
  const reason = reasonField('deletion-reason', 'deletion-reason', 'erasure request from the end user, ticket 9921');
  const confirm = h('input', { id: 'deletion-confirm', type: 'checkbox', required: true, testid: 'deletion-confirm' });
  const submit = h('button', { type: 'submit', class: 'btn btn-danger', testid: 'deletion-submit' }, 'Delete content');
  const form = h('form', { class: 'stack', testid: 'deletion-form' },
    scope.nodes,
    h('div', { class: 'form-row' }, h('label', { for: 'deletion-reason' }, 'Reason (recorded)'), reason),
    h('label', { class: 'check' }, confirm,
      ' I understand that the content (inputs, outputs, instructions) of every matching call is deleted for good. Objects on legal hold stay until the hold is released.'),
    h('div', { class: 'actions' }, submit));
  onSubmit(form, submit, async () => {
    // lifecycle.DeletionRequest: {Scope, Reason}.
    const res = await api.post('/api/v1/deletions', { scope: scope.read(), reason: reason.value.trim() }, ctx.signal);
    const job = res.job || {};
    flash(`Deletion request ${job.job_id || ''} recorded; it runs in the background.`);
    navigate(`/admin/deletions${api.query({ job: job.job_id })}`);
  });
  return form;
}

// detail shows one job and its recorded states, refreshing while it runs.
function detail(ctx, id) {
  const box = h('div', { testid: 'deletion-detail' });
  replace(ctx.main,
    pageHeader(['Deletion request ', h('code', null, id)], h('a', { href: '/admin/deletions', class: 'btn' }, 'All requests')),
    box);
  let timer = 0;
  ctx.signal.addEventListener('abort', () => clearTimeout(timer));
  const refresh = async (first) => {
    try {
      const data = await api.get(`/api/v1/deletions/${encodeURIComponent(id)}`, ctx.signal);
      replace(box, jobView(data));
      if (ACTIVE.includes((data.job || {}).status) && !ctx.signal.aborted) {
        timer = setTimeout(() => refresh(false), REFRESH_MS);
      }
    } catch (err) {
      if (first) {
        replace(box, h('p', { class: 'section-error', testid: 'section-error' }, `Could not load the deletion request: ${err.message}`));
      }
      fail(err);
    }
  };
  replace(box, h('p', { class: 'loading', testid: 'loading', role: 'status' }, 'Loading the deletion request…'));
  refresh(true);
}

function jobView(data) {
  const j = data.job || {};
  const c = j.counts || {};
  const history = Array.isArray(data.history) ? data.history : [];
  return [
    section('State', { testid: 'deletion-state' },
      h('div', { class: 'progress-big' }, progress(c), ACTIVE.includes(j.status) ? h('span', { class: 'muted' }, ' · refreshing every 2 s') : null),
      dl([
        ['Status', 'status', statusText(j)],
        ['Scope', 'scope', scopeText(j.scope)],
        ['Reason', 'reason', j.reason || fmt.NOT_REPORTED],
        ['Requested by', 'requested_by', j.requested_by || fmt.NOT_REPORTED],
        ['Requested (UTC)', 'requested_at', timeEl(j.requested_at)],
        ['Last run by', 'run_by', j.run_by || 'none'],
        ['Updated (UTC)', 'updated_at', timeEl(j.updated_at)],
        ['Calls matched', 'calls_matched', fmt.count(c.calls_matched)],
        ['Objects matched', 'objects_matched', fmt.count(c.objects_matched)],
        ['Objects deleted', 'objects_deleted', fmt.count(c.objects_deleted)],
        ['Kept: shared with calls outside the request', 'objects_kept_shared', fmt.count(c.objects_kept_shared)],
        ['Kept: on legal hold', 'objects_held', fmt.count(c.objects_held)],
        ['Error', 'error', j.error || 'none'],
      ])),
    section('History', { testid: 'deletion-history' },
      history.length === 0 ? empty('No earlier states are recorded.') : table({ testid: 'deletion-history-table' },
        ['Recorded (UTC)', 'Status', 'Run by', n('Calls'), n('Objects matched'), n('Deleted'), n('Kept shared'), n('Held'), 'Error'],
        history.map((s) => {
          const k = s.counts || {};
          return h('tr', { testid: 'deletion-history-row' },
            td(timeEl(s.updated_at)), td(statusText(s)), td(s.run_by || ''),
            num(fmt.count(k.calls_matched)), num(fmt.count(k.objects_matched)), num(fmt.count(k.objects_deleted)),
            num(fmt.count(k.objects_kept_shared)), num(fmt.count(k.objects_held)), td(s.error || '', { class: 'wrap' }));
        }))),
  ];
}
