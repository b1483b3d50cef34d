/**
 * @module login
 * The management pages' sign-in form: the management key, posted (never in
 * a URL) to `/dashboard/login`, opens a browser session, then returns to
 * the page that asked (`next`).
 */
import { html } from 'hono/html';
import { page } from './layout.js';

/** The sign-in page, with an optional error line; `next` is the page to return to (default the dashboard). */
export function loginPage(error?: string, next = '/dashboard') {
  return page({
    title: next === '/dashboard' ? 'Switchyard dashboard: sign in' : 'Switchyard: sign in',
    body: html`<main>
<section class="login" aria-labelledby="login-title">
<h1 id="login-title">${next === '/dashboard' ? 'Switchyard dashboard' : 'Switchyard gateway'}</h1>
<p class="muted">Sign in with the management key (<code>remote-management.secret-key</code>).</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/dashboard/login">
<input type="hidden" name="next" value="${next}">
<label for="key">Management key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<input type="submit" value="Sign in">
</form>
</section>
</main>`,
  });
}
