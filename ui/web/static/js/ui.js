// Pieces every page uses: the alert banner, loading states, definition
// lists, tables and links.

import { h, replace } from './dom.js';
import { isAbort } from './api.js';
import { navigate } from './router.js';
import * as fmt from './format.js';

function alerts() {
  return document.getElementById('alerts');
}

// showError puts an API or input error in the visible banner.
export function showError(message, status) {
  replace(alerts(),
    h('div', { class: 'alert alert-error', role: 'alert', testid: 'alert' },
      status ? h('span', { class: 'alert-status', testid: 'alert-status' }, `Error ${status}`) : null,
      h('span', { class: 'alert-text', testid: 'alert-text' }, message),
      h('button', { type: 'button', class: 'alert-close', 'aria-label': 'Dismiss', onclick: clearAlerts }, '×')));
}

// showNotice confirms something that worked.
export function showNotice(message) {
  replace(alerts(),
    h('div', { class: 'alert alert-notice', role: 'status', testid: 'notice' },
      h('span', { class: 'alert-text' }, message),
      h('button', { type: 'button', class: 'alert-close', 'aria-label': 'Dismiss', onclick: clearAlerts }, '×')));
}

// showDegraded keeps a banner up while a store the UI needs is
// unavailable (GET /api/v1/status); page alerts do not replace it.
export function showDegraded(status) {
  const el = document.getElementById('degraded');
  const lines = [];
  if (status && status.ledger && !status.ledger.available) {
    const since = status.ledger.unavailable_since ? ` since ${fmt.time(status.ledger.unavailable_since)}` : '';
    lines.push(`The ledger is unavailable${since}: calls wait in the collector's queue and appear here once it is back.` +
      (status.ledger.error ? ` (${status.ledger.error})` : ''));
  }
  if (status && status.content_store_unavailable) {
    lines.push('The content store is unavailable: content cannot be revealed, and new content is recorded as store_unavailable.');
  }
  if (!lines.length) {
    replace(el);
    return;
  }
  replace(el, h('div', { class: 'alert alert-error', role: 'alert', testid: 'degraded' },
    h('span', { class: 'alert-text' }, lines.join(' '))));
}

export function clearAlerts() {
  replace(alerts());
}

let pendingNotice = '';

// flash shows a notice after the next navigation (which clears alerts).
export function flash(message) {
  pendingNotice = message;
}

export function takeFlash() {
  const m = pendingNotice;
  pendingNotice = '';
  return m;
}

// fail handles an error of an API call: a lapsed session goes to sign-in,
// a required password change to the account page, a cancelled request is
// ignored, and everything else is shown in the banner.
export function fail(e) {
  if (isAbort(e)) {
    return;
  }
  const path = location.pathname + location.search;
  if (e && e.status === 401 && location.pathname !== '/login') {
    navigate(`/login?next=${encodeURIComponent(path)}`, { replace: true });
    return;
  }
  if (e && e.status === 403 && e.message === 'password change required' && location.pathname !== '/account') {
    navigate(`/account?next=${encodeURIComponent(path)}`, { replace: true });
    return;
  }
  showError(e && e.message ? e.message : String(e), e && e.status);
}

export function loading(what) {
  return h('p', { class: 'loading', testid: 'loading', role: 'status' }, what ? `Loading ${what}…` : 'Loading…');
}

// load fills container with render(data) once promise resolves; meanwhile
// it shows a loading line, and on failure an inline note as well as the
// banner, so a failed part of a page is never just empty.
export async function load(container, what, promise, renderData) {
  replace(container, loading(what));
  container.setAttribute('aria-busy', 'true');
  try {
    const data = await promise;
    replace(container, renderData(data));
  } catch (e) {
    if (!isAbort(e)) {
      replace(container, h('p', { class: 'section-error', testid: 'section-error' }, `Could not load ${what}: ${e.message}`));
    }
    fail(e);
  } finally {
    container.removeAttribute('aria-busy');
  }
}

// dl builds a definition list from [label, field, value] rows; the value's
// <dd> carries data-field so tests and people can find it.
export function dl(rows, props) {
  const out = h('dl', Object.assign({ class: 'fields' }, props || {}));
  for (const row of rows) {
    if (!row) {
      continue;
    }
    const [label, field, value] = row;
    const missing = value === fmt.NOT_REPORTED || value === 'none' || value === 'not set';
    out.append(h('dt', null, label), h('dd', { field, class: missing ? 'muted' : null }, value));
  }
  return out;
}

// table builds a table with a header row; rows are <tr> elements. A
// header is a label, or {label, num: true} for a right-aligned quantity.
export function table(props, headers, rows) {
  const th = (col) => (typeof col === 'string'
    ? h('th', { scope: 'col' }, col)
    : h('th', { scope: 'col', class: col.num ? 'num' : null }, col.label));
  return h('div', { class: 'table-wrap' },
    h('table', Object.assign({ class: 'grid' }, props),
      h('thead', null, h('tr', null, headers.map(th))),
      h('tbody', null, rows)));
}

// n is a right-aligned column header.
export function n(label) {
  return { label, num: true };
}

export function td(value, props) {
  return h('td', props || null, value);
}

export function num(value, props) {
  return h('td', Object.assign({ class: 'num' }, props || {}), value);
}

// complaintPath is the permalink of a trace.
export function complaintPath(traceId) {
  return `/complaints/${encodeURIComponent(traceId)}`;
}

export function complaintLink(traceId, label, props) {
  return h('a', Object.assign({ href: complaintPath(traceId), class: 'mono' }, props || {}), label || traceId);
}

export function timeEl(iso) {
  const shown = fmt.time(iso);
  return fmt.timeValue(iso) ? h('time', { datetime: shown }, shown) : shown;
}

export function statusBadge(status, errorClass) {
  const cls = status === 'error' ? 'badge badge-error' : status === 'ok' ? 'badge badge-ok' : 'badge';
  return h('span', { class: cls }, errorClass ? `${status || 'unset'} · ${errorClass}` : status || 'unset');
}

// copyButton copies text to the clipboard, falling back to selecting the
// given input where the clipboard API is not available (plain HTTP).
export function copyButton(value, input, props) {
  const button = h('button', Object.assign({ type: 'button', class: 'btn btn-small' }, props || {}), 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = 'Copied';
    } catch (e) {
      if (input) {
        input.focus();
        input.select();
      }
      button.textContent = 'Press Ctrl+C';
    }
    setTimeout(() => { button.textContent = 'Copy'; }, 2000);
  });
  return button;
}

export function pageHeader(title, ...extra) {
  return h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, title), extra);
}

export function section(title, props, ...children) {
  return h('section', Object.assign({ class: 'panel' }, props || {}), h('h2', null, title), children);
}

export function empty(message, testid) {
  return h('p', { class: 'empty', testid: testid || 'empty' }, message);
}

// onSubmit runs action when form is submitted: alerts cleared, the submit
// button disabled while it runs, and a failure shown rather than lost.
export function onSubmit(form, submit, action) {
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlerts();
    submit.disabled = true;
    try {
      await action();
    } catch (err) {
      fail(err);
    } finally {
      submit.disabled = false;
    }
  });
}
