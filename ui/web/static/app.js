// Docket evidence UI: routes, the session check and the header. Pages live
// in js/pages; each renders into <main> and loads its own data.

import { h, replace } from './js/dom.js';
import * as api from './js/api.js';
import { start, navigate } from './js/router.js';
import { clearAlerts, fail, showDegraded, showNotice, takeFlash, loading } from './js/ui.js';
import * as fmt from './js/format.js';
import login from './js/pages/login.js';
import account from './js/pages/account.js';
import lookup from './js/pages/lookup.js';
import complaint from './js/pages/complaint.js';
import ledger from './js/pages/ledger.js';
import costs from './js/pages/costs.js';
import reconcile from './js/pages/reconcile.js';
import exportPage from './js/pages/export.js';
import holds from './js/pages/holds.js';
import deletions from './js/pages/deletions.js';
import accessLog from './js/pages/accesslog.js';
import tokens from './js/pages/tokens.js';

// Each route: path pattern, page, title, and who may see it.
const ROUTES = [
  { path: /^\/login$/, page: login, title: 'Sign in', public: true },
  { path: /^\/account$/, page: account, title: 'Account' },
  { path: /^\/$/, page: lookup, title: 'Lookup', nav: 'lookup' },
  { path: /^\/complaints\/([^/]+)$/, page: complaint, title: 'Complaint', nav: 'lookup' },
  { path: /^\/ledger$/, page: ledger, title: 'Ledger', nav: 'ledger' },
  { path: /^\/costs$/, page: costs, title: 'Costs', nav: 'costs' },
  { path: /^\/reconcile$/, page: reconcile, title: 'Reconciliation', nav: 'reconcile' },
  { path: /^\/export$/, page: exportPage, title: 'Export', nav: 'export' },
  { path: /^\/admin\/holds$/, page: holds, title: 'Legal holds', nav: 'holds', admin: true },
  { path: /^\/admin\/deletions$/, page: deletions, title: 'Deletions', nav: 'deletions', admin: true },
  { path: /^\/admin\/access-log$/, page: accessLog, title: 'Access log', nav: 'access-log', admin: true },
  { path: /^\/admin\/tokens$/, page: tokens, title: 'API tokens', nav: 'tokens', admin: true },
];

const NAV = [
  ['lookup', '/', 'Lookup'],
  ['ledger', '/ledger', 'Ledger'],
  ['costs', '/costs', 'Costs'],
  // Reconciliation counts every tenant's calls: only for a grant of all tenants.
  ['reconcile', '/reconcile', 'Reconciliation'],
  ['export', '/export', 'Export'],
];

const ADMIN_NAV = [
  ['holds', '/admin/holds', 'Holds'],
  ['deletions', '/admin/deletions', 'Deletions'],
  ['access-log', '/admin/access-log', 'Access log'],
  ['tokens', '/admin/tokens', 'API tokens'],
];

let controller = null;
let firstRender = true;

function header(session, active) {
  const bar = document.getElementById('topbar');
  const link = ([key, href, label]) => h('a', { href, testid: `nav-${key}`, class: 'nav-link', 'aria-current': key === active ? 'page' : null }, label);
  const isAdmin = session && fmt.anyGrant(session.grants, 'admin');
  replace(bar,
    h('a', { href: '/', class: 'brand', 'aria-label': 'Docket home' }, 'Docket'),
    session ? h('nav', { class: 'nav', 'aria-label': 'Main', testid: 'nav' },
      NAV.filter(([key]) => key !== 'reconcile' || fmt.roleFor(session.grants, '*') !== '').map(link),
      isAdmin ? h('span', { class: 'nav-group', testid: 'nav-admin' }, h('span', { class: 'nav-group-label' }, 'Admin'), ADMIN_NAV.map(link)) : null) : null,
    session ? h('div', { class: 'who' },
      h('a', { href: '/account', class: 'user', testid: 'user', title: 'Account' }, session.user),
      h('span', { class: 'grants', testid: 'grants', title: fmt.grantsText(session.grants) }, fmt.grantsText(session.grants)),
      session.mode === 'proxy' ? null : h('button', { type: 'button', class: 'btn btn-small', testid: 'sign-out', onclick: signOut }, 'Sign out')) : null);
}

async function signOut() {
  try {
    await api.del('/api/v1/session');
    api.useSession(null);
    navigate('/login', { replace: false });
  } catch (e) {
    fail(e);
  }
}

function notFound(main) {
  replace(main, h('section', { class: 'panel', testid: 'not-found' },
    h('h1', { tabindex: '-1' }, 'Page not found'),
    h('p', null, 'There is no page at this address. ', h('a', { href: '/' }, 'Go to the lookup.'))));
}

async function render() {
  if (controller) {
    controller.abort();
  }
  controller = new AbortController();
  const signal = controller.signal;
  const main = document.getElementById('main');
  const path = location.pathname;
  const query = new URLSearchParams(location.search);
  clearAlerts();
  const notice = takeFlash();
  if (notice) {
    showNotice(notice);
  }
  const route = ROUTES.find((r) => r.path.test(path));
  replace(main, loading());
  let session = null;
  if (!route || !route.public) {
    try {
      session = await api.get('/api/v1/session', signal);
      api.useSession(session);
    } catch (e) {
      if (api.isAbort(e)) {
        return;
      }
      if (e.status === 401) {
        navigate(`/login?next=${encodeURIComponent(path + location.search)}`, { replace: true });
        return;
      }
      header(null, '');
      replace(main);
      fail(e);
      return;
    }
    api.get('/api/v1/status', signal).then(showDegraded, () => {});
    if (session.must_change_password && path !== '/account') {
      navigate(`/account?next=${encodeURIComponent(path + location.search)}`, { replace: true });
      return;
    }
  }
  header(session, route ? route.nav : '');
  document.title = route ? `${route.title} · Docket` : 'Not found · Docket';
  if (!route) {
    notFound(main);
  } else if (route.admin && !fmt.anyGrant(session.grants, 'admin')) {
    replace(main, h('section', { class: 'panel', testid: 'forbidden' },
      h('h1', { tabindex: '-1' }, route.title),
      h('p', null, 'This page needs the admin role; your grants are ', fmt.grantsText(session.grants), '.')));
  } else {
    const match = route.path.exec(path);
    const params = match.slice(1).map((p) => {
      try {
        return decodeURIComponent(p);
      } catch (e) {
        return p;
      }
    });
    try {
      await route.page({ main, session, params, query, signal });
    } catch (e) {
      fail(e);
    }
  }
  // After a navigation (not the first load), move focus to the new page's
  // heading so keyboard and screen-reader users start there.
  if (!firstRender) {
    const heading = main.querySelector('h1');
    if (heading) {
      heading.focus({ preventScroll: true });
    }
    window.scrollTo(0, 0);
  }
  firstRender = false;
}

start(render);
