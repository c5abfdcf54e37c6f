// Password change; forced while the session says must_change_password.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { showError, showNotice, clearAlerts, flash, fail, pageHeader, dl } from '../ui.js';
import { safeNext, grantsText } from '../format.js';

export default function account(ctx) {
  const session = ctx.session;
  const forced = Boolean(session.must_change_password);
  const who = dl([
    ['User', 'user', session.user],
    ['Sign-in', 'mode', session.mode === 'proxy' ? 'through the trusted proxy' : 'built-in user'],
    ['Grants', 'grants', grantsText(session.grants)],
  ]);
  if (session.mode === 'proxy') {
    replace(ctx.main, pageHeader('Account'), h('section', { class: 'panel' }, who,
      h('p', { class: 'muted' }, 'Your sign-in is managed by the proxy in front of Docket; there is no Docket password to change.')));
    return;
  }
  const field = (id, label, autocomplete) => [
    h('label', { for: id }, label),
    h('input', { id, name: id, type: 'password', autocomplete, required: true, testid: id }),
  ];
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'password-submit' }, 'Change password');
  const form = h('form', { class: 'stack', testid: 'password-form' },
    field('password-current', 'Current password', 'current-password'),
    field('password-new', 'New password', 'new-password'),
    field('password-confirm', 'New password again', 'new-password'),
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlerts();
    const current = form.elements['password-current'].value;
    const next = form.elements['password-new'].value;
    if (next !== form.elements['password-confirm'].value) {
      showError('The two new passwords differ.');
      return;
    }
    submit.disabled = true;
    try {
      await api.post('/api/v1/session/password', { current, new: next }, ctx.signal);
      form.reset();
      if (forced) {
        flash('Password changed.');
        navigate(safeNext(ctx.query.get('next') || '/'), { replace: true });
      } else {
        showNotice('Password changed.');
      }
    } catch (err) {
      // A wrong current password is a 401 or 403 here, not a lapsed
      // session: show it instead of leaving the page.
      if (err.status === 401 || err.status === 403) {
        showError(err.message, err.status);
      } else {
        fail(err);
      }
    } finally {
      submit.disabled = false;
    }
  });
  replace(ctx.main,
    pageHeader('Account'),
    forced ? h('p', { class: 'callout', testid: 'password-required' }, 'You must change your password before you can use Docket.') : null,
    h('section', { class: 'panel narrow' }, who, h('h2', null, 'Change password'), form));
}
