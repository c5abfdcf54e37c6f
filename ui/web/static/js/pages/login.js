// Sign in with a built-in user. A user who must change the password goes
// to the account page first.

import { h, replace } from '../dom.js';
import * as api from '../api.js';
import { navigate } from '../router.js';
import { showError, clearAlerts } from '../ui.js';
import { safeNext } from '../format.js';

export default function login(ctx) {
  const next = safeNext(ctx.query.get('next') || '/');
  const user = h('input', { id: 'login-user', name: 'user', autocomplete: 'username', required: true, testid: 'login-user', autofocus: true });
  const password = h('input', { id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, testid: 'login-password' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'login-submit' }, 'Sign in');
  const form = h('form', { class: 'panel narrow stack login', testid: 'login-form' },
    h('h1', { tabindex: '-1' }, 'Sign in to Docket'),
    h('label', { for: 'login-user' }, 'User'), user,
    h('label', { for: 'login-password' }, 'Password'), password,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlerts();
    submit.disabled = true;
    try {
      // Passwords are sent exactly as typed (no trimming).
      const session = await api.post('/api/v1/session', { user: user.value.trim(), password: password.value });
      api.useSession(session);
      navigate(session.must_change_password ? `/account?next=${encodeURIComponent(next)}` : next, { replace: true });
    } catch (err) {
      password.value = '';
      showError(err.message, err.status);
      submit.disabled = false;
      password.focus();
    }
  });
  replace(ctx.main, form);
  user.focus();
}
