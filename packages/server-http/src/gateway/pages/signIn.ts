/**
 * @module signIn
 * `GET /v0/oauth/{flow}`: a device sign-in in the browser. It starts the
 * sign-in through the JSON API (with the browser session's cookie, so the
 * management key never appears in a URL), shows the user code and the
 * verification link with a copy button, and polls until the sign-in
 * succeeds or fails for a reason it names: expired, denied, or the gateway
 * out of reach. For a cloud coding-assistant flow the user first picks
 * builder-ID or identity-center (start URL and region). Plain HTML and one
 * script; no build step, no network but this gateway.
 */
import { html, raw } from 'hono/html';
import { type Html, page } from './layout.js';

const CLOUD_FIELDS = raw(`<fieldset>
<legend>Account</legend>
<p><label><input type="radio" name="mode" value="builder-id" checked> Builder ID (a personal account)</label></p>
<p><label><input type="radio" name="mode" value="identity-center"> IAM Identity Center (an organization)</label></p>
<div id="identity-center" hidden>
<p><label for="start-url">Start URL</label><br><input id="start-url" name="start_url" type="url" placeholder="https://my-org.awsapps.com/start" size="40"></p>
<p><label for="region">Region</label><br><input id="region" name="region" type="text" placeholder="us-east-1" size="16" autocomplete="off"></p>
</div>
</fieldset>`);

function body(flow: string, cloud: boolean): Html {
  return html`<header>
<h1>Sign in: ${flow}</h1>
<form method="post" action="/dashboard/logout"><button type="submit">Sign out</button></form>
</header>
<main data-flow="${flow}">
<section aria-labelledby="start-title">
<h2 id="start-title">1. Start</h2>
<form id="start">
${cloud ? CLOUD_FIELDS : html`<p class="muted">The gateway asks the provider for a one-time code for you to approve.</p>`}
<p id="form-error" class="error" role="alert"></p>
<button type="submit" id="start-button">Start sign-in</button>
</form>
</section>
<section aria-labelledby="code-title" id="prompt" hidden>
<h2 id="code-title">2. Approve</h2>
<p>Open <a id="verification" href="#" target="_blank" rel="noopener noreferrer"></a> and enter this code:</p>
<p><output id="user-code" aria-label="Your code" class="code"></output> <button type="button" id="copy">Copy code</button> <span id="copied" class="muted" aria-live="polite"></span></p>
<p class="muted">The code expires at <time id="expires"></time>.</p>
<p><button type="button" id="cancel">Cancel</button></p>
</section>
<section aria-labelledby="status-title">
<h2 id="status-title">Status</h2>
<p id="status" role="status" aria-live="polite">Not started.</p>
<p><button type="button" id="again" hidden>Start again</button></p>
</section>
</main>`;
}

// The page's one script. Written for browsers as they are, with no build step.
const SCRIPT = `
const $ = (id) => document.getElementById(id);
const flow = document.querySelector('main').dataset.flow;
const state = { session: null, timer: null, failures: 0 };
function show(status, message, className) {
  document.body.dataset.state = status;
  const line = $('status');
  line.textContent = message;
  line.className = className || '';
}
async function api(path, init) {
  let response;
  try { response = await fetch(path, { credentials: 'same-origin', ...init }); }
  catch (error) { throw Object.assign(new Error('network'), { network: true }); }
  if (response.status === 401) { location.reload(); throw new Error('signed out'); }
  const body = await response.json().catch(() => null);
  if (!response.ok) throw Object.assign(new Error(body && body.error ? body.error.message : 'HTTP ' + response.status), { status: response.status, body });
  return body;
}
const identityCenter = $('identity-center');
if (identityCenter) {
  for (const radio of document.querySelectorAll('input[name=mode]')) radio.addEventListener('change', () => {
    identityCenter.hidden = document.querySelector('input[name=mode]:checked').value !== 'identity-center';
  });
}
function options() {
  const mode = document.querySelector('input[name=mode]:checked');
  if (!mode) return {};
  if (mode.value === 'builder-id') return { mode: 'builder-id' };
  return { mode: 'identity-center', start_url: $('start-url').value.trim(), region: $('region').value.trim() };
}
function finish(view) {
  clearTimeout(state.timer);
  state.session = null;
  $('prompt').hidden = true;
  $('again').hidden = false;
  $('start-button').disabled = false;
  if (view.status === 'succeeded') {
    show('succeeded', 'Signed in. The credential ' + view.credential_id + ' is stored and serves requests now.', 'ok');
    $('again').textContent = 'Sign in another account';
  } else if (view.status === 'expired') {
    show('expired', 'The code expired before the sign-in was approved. Start again to get a new code.', 'bad');
  } else if (view.error && view.error.code === 'access_denied') {
    show('failed', 'The sign-in was denied at the provider. Start again if that was a mistake.', 'bad');
  } else if (view.error && view.error.code === 'cancelled') {
    show('failed', 'The sign-in was cancelled.', 'muted');
  } else {
    show('failed', 'The sign-in failed: ' + (view.error ? view.error.message : 'unknown error') + '.', 'bad');
  }
}
async function poll(session) {
  if (state.session !== session) return;
  try {
    const view = await api('/v0/oauth/sessions/' + encodeURIComponent(session.session_id));
    state.failures = 0;
    if (view.status !== 'pending') return finish(view);
    show('pending', 'Waiting for you to approve the code…');
  } catch (error) {
    if (!error.network && error.status !== 404) throw error;
    if (error.status === 404) return finish({ status: 'failed', error: { code: 'gone', message: 'the gateway no longer knows this sign-in (was it restarted?)' } });
    if (++state.failures >= 5) return finish({ status: 'failed', error: { code: 'network', message: 'the gateway cannot be reached (network error); check that it is running' } });
    show('pending', 'Cannot reach the gateway (network error); trying again…', 'warn');
  }
  state.timer = setTimeout(() => poll(session).catch(fail), Math.max(1000, session.interval * 1000));
}
function fail(error) {
  finish({ status: 'failed', error: { code: 'error', message: error.network ? 'the gateway cannot be reached (network error)' : error.message } });
}
async function start(event) {
  event.preventDefault();
  $('form-error').textContent = '';
  $('start-button').disabled = true;
  show('starting', 'Asking the provider for a code…');
  let session;
  try {
    session = await api('/v0/oauth/' + encodeURIComponent(flow) + '/sessions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options()),
    });
  } catch (error) {
    $('start-button').disabled = false;
    if (error.status === 422) {
      const issues = (error.body && error.body.error.details && error.body.error.details.issues) || [];
      $('form-error').textContent = issues.map((i) => i.field + ': ' + i.message).join('; ') || error.message;
      show('invalid', 'Fix the fields above and start again.', 'bad');
      return;
    }
    show('failed', 'Could not start the sign-in: ' + (error.network ? 'the gateway cannot be reached (network error)' : error.message), 'bad');
    return;
  }
  state.session = session;
  state.failures = 0;
  $('again').hidden = true;
  $('user-code').textContent = session.user_code;
  const link = $('verification');
  link.href = session.verification_uri_complete || session.verification_uri;
  link.textContent = session.verification_uri;
  const expires = $('expires');
  expires.dateTime = session.expires_at;
  expires.textContent = new Date(session.expires_at).toLocaleTimeString();
  $('copied').textContent = '';
  $('prompt').hidden = false;
  show('pending', 'Waiting for you to approve the code…');
  state.timer = setTimeout(() => poll(session).catch(fail), Math.max(1000, session.interval * 1000));
}
$('start').addEventListener('submit', (event) => start(event).catch(fail));
$('copy').addEventListener('click', async () => {
  const code = $('user-code').textContent;
  try { await navigator.clipboard.writeText(code); $('copied').textContent = 'Copied.'; }
  catch {
    const range = document.createRange(); range.selectNodeContents($('user-code'));
    const selection = getSelection(); selection.removeAllRanges(); selection.addRange(range);
    $('copied').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
});
$('cancel').addEventListener('click', async () => {
  const session = state.session;
  if (!session) return;
  state.session = null;
  clearTimeout(state.timer);
  const view = await api('/v0/oauth/sessions/' + encodeURIComponent(session.session_id), { method: 'DELETE' }).catch(() => null);
  finish(view || { status: 'failed', error: { code: 'cancelled' } });
});
$('again').addEventListener('click', () => { $('again').hidden = true; show('idle', 'Not started.'); $('start-button').focus(); });
document.body.dataset.state = 'idle';
`;

const EXTRA_STYLE = `
.code { font: 600 1.6rem/1.2 ui-monospace, SFMono-Regular, Menlo, monospace; letter-spacing: .1em; padding: .2rem .5rem; border: 1px dashed var(--line); border-radius: 6px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; }
input[type=url], input[type=text] { font: inherit; padding: .35rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
`;

/** The sign-in page of one flow; `kind` decides whether it asks for the account kind first. */
export function signInPage(options: { flow: string; kind: 'device-code' | 'code-assistant' | 'cloud-coding-assistant' }) {
  return page({
    title: `Switchyard: sign in (${options.flow})`,
    body: body(options.flow, options.kind === 'cloud-coding-assistant'),
    script: SCRIPT,
    style: EXTRA_STYLE,
  });
}
