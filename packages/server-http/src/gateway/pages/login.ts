/**
 * @module login
 * The dashboard's sign-in form: the management key, posted to
 * `/dashboard/login`, opens a browser session.
 */
import { escapeHtml, page } from './layout.js';

/** The sign-in page, with an optional error line. */
export function loginPage(error?: string) {
  return page({
    title: 'Switchyard dashboard: sign in',
    body: `<main>
<section class="login" aria-labelledby="login-title">
<h1 id="login-title">Switchyard dashboard</h1>
<p class="muted">Sign in with the management key (<code>remote-management.secret-key</code>).</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/dashboard/login">
<label for="key">Management key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<input type="submit" value="Sign in">
</form>
</section>
</main>`,
  });
}
