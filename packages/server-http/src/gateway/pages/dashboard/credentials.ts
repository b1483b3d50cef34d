/**
 * @module dashboard/credentials
 * The credentials panel: every credential with its status and quota, and
 * the operator's actions on it (disable or enable, refresh an OAuth token,
 * set a quota limit, delete); a form that adds an API key; and links to the
 * device sign-in pages of the configured flows. Tokens are sent, never
 * shown: the API answers status records without them.
 */
import { html } from 'hono/html';

export const CREDENTIALS_BODY = html`<section aria-labelledby="credentials-title" id="credentials-panel" class="wide">
<h2 id="credentials-title">Credentials</h2>
<table>
<caption class="visually-hidden">Credentials, their status and quota</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Credential</th><th scope="col">Status</th><th scope="col">Quota</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="credentials"><tr><td colspan="5" class="muted">Loading…</td></tr></tbody>
</table>
<p id="credentials-report" role="status" aria-live="polite"></p>
<details id="add-credential">
<summary>Add an API key</summary>
<form id="credential-form" class="fields">
<label>Provider <select id="credential-provider" name="provider" required></select></label>
<label>Id <input id="credential-id" name="id" required pattern="[A-Za-z0-9][A-Za-z0-9._\\-]*" maxlength="128" autocomplete="off" placeholder="openai-team"></label>
<label>Key <input id="credential-token" name="token" type="password" required autocomplete="off"></label>
<label>Label <input id="credential-label" name="label" maxlength="128" autocomplete="off"></label>
<label>Priority <input id="credential-priority" name="priority" type="number" value="0" step="1"></label>
<label>Quota (tokens, empty for none) <input id="credential-quota" name="quota" type="number" min="0" step="1"></label>
<button type="submit">Add credential</button>
</form>
</details>
<h3>Sign in with a provider account</h3>
<ul id="flows"><li class="muted">Loading…</li></ul>
</section>`;

export const CREDENTIALS_SCRIPT = `
const credentials = { providers: [] };
function quotaCell(a) {
  const quota = document.createElement('td');
  if (a.quota && a.quota.limit) {
    const meter = el('meter', { min: 0, max: a.quota.limit, value: a.quota.used, low: a.quota.limit * 0.7, high: a.quota.limit * 0.9, optimum: 0,
      'aria-label': 'Quota of ' + (a.label || a.id) + ': ' + a.quota.used + ' of ' + a.quota.limit + ' used' });
    quota.append(meter, text(' ' + a.quota.used + ' / ' + a.quota.limit));
  } else quota.append(text('unlimited'));
  return quota;
}
function credentialPath(a, suffix) {
  return '/v0/management/auths/' + encodeURIComponent(a.provider) + (suffix || '') + '?id=' + encodeURIComponent(a.id);
}
function credentialActions(a) {
  const name = a.label || a.id;
  const td = el('td', { className: 'actions' });
  td.append(a.status === 'disabled'
    ? actionButton('Enable', 'Enable ' + name, () => api(credentialPath(a), json('PUT', { status: 'active' })).then(() => name + ' enabled'), 'credentials-report')
    : actionButton('Disable', 'Disable ' + name, () => api(credentialPath(a), json('PUT', { status: 'disabled' })).then(() => name + ' disabled'), 'credentials-report'));
  if (a.refreshable) td.append(actionButton('Refresh', 'Refresh the token of ' + name, () => api(credentialPath(a, '/refresh'), json('POST')).then(() => name + ' refreshed'), 'credentials-report'));
  td.append(actionButton('Quota…', 'Set the quota of ' + name, async () => {
    const answer = prompt('Quota limit in tokens for ' + name + ' (empty for none)', a.quota && a.quota.limit ? String(a.quota.limit) : '');
    if (answer === null) return '';
    const limit = answer.trim() === '' ? null : Number(answer);
    if (limit !== null && !(Number.isInteger(limit) && limit >= 0)) throw new Error('a quota is a whole number of tokens, or empty for none');
    await api(credentialPath(a, '/quota'), json('PUT', { limit }));
    return 'quota of ' + name + (limit === null ? ' removed' : ' set to ' + limit);
  }, 'credentials-report'));
  td.append(actionButton('Delete', 'Delete ' + name, async () => {
    if (!confirm('Delete the credential ' + name + '? Its file is removed too.')) return '';
    await api(credentialPath(a), json('DELETE'));
    return name + ' deleted';
  }, 'credentials-report'));
  return td;
}
function renderCredentials(auths) {
  if (!auths) { replaceRows('credentials', [], 'Credential management is not available on this gateway.', 5); return; }
  const rows = auths.map((a) => {
    const tr = el('tr', { 'data-credential': a.id });
    tr.append(cell(a.provider), cell(a.label || a.id), cell(a.status, a.status === 'active' ? 'ok' : 'bad'), quotaCell(a), credentialActions(a));
    return tr;
  });
  replaceRows('credentials', rows, 'No credentials yet.', 5);
}
function renderProviderChoices(names) {
  if (names.join() === credentials.providers.join()) return;
  credentials.providers = names;
  const select = $('credential-provider');
  const chosen = select.value;
  select.replaceChildren(...names.map((name) => el('option', { value: name }, name)));
  if (names.includes(chosen)) select.value = chosen;
}
onRefresh(async () => {
  let auths = null;
  try { auths = (await api('/v0/management/auths')).auths; } catch (error) { if (error.status !== 404 && error.status !== 501) throw error; }
  renderCredentials(auths);
  renderProviderChoices(Object.keys((await api('/v0/operations/providers/status')).providers));
});
$('credential-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const quota = $('credential-quota').value.trim();
  const body = { id: $('credential-id').value.trim(), provider: $('credential-provider').value, type: 'api_key', token: $('credential-token').value,
    priority: Number($('credential-priority').value || 0) };
  if ($('credential-label').value.trim()) body.label = $('credential-label').value.trim();
  if (quota) body.quota = { limit: Number(quota) };
  try {
    await api('/v0/management/auths', json('POST', body));
    report('credentials-report', 'added ' + body.id + ' to ' + body.provider, true);
    $('credential-form').reset();
    await refresh();
  } catch (error) { report('credentials-report', error.message, false); }
});
api('/v0/oauth').then(({ flows }) => {
  const list = $('flows');
  list.replaceChildren(...(flows.length ? flows.map((f) => el('li', {}, el('a', { href: f.page }, 'Sign in: ' + f.name), el('span', { className: 'muted' }, ' ' + f.kind))) : [el('li', { className: 'muted' }, 'No sign-in flow is configured (oauth in the config).')]));
}).catch(() => $('flows').replaceChildren(el('li', { className: 'muted' }, 'Sign-in flows are not available on this gateway.')));
`;
