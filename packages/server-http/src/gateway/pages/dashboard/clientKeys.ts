/**
 * @module dashboard/clientKeys
 * The client keys panel: every runtime key with its tenant, limits, budget
 * use and expiry; a form that creates one (its secret shown once, in the
 * page only, with a copy button) or changes one's limits; revoke. Keys from
 * the config's `api-keys` are not listed: they are edited in the config.
 */
import { html } from 'hono/html';

export const CLIENT_KEYS_BODY = html`<section aria-labelledby="keys-title" id="keys-panel" class="wide">
<h2 id="keys-title">Client keys</h2>
<table>
<caption class="visually-hidden">Client keys with their limits and budget use</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Tenant</th><th scope="col">Key</th><th scope="col">Models</th><th scope="col">Rate limits</th><th scope="col">Budget</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="client-keys"><tr><td colspan="9" class="muted">Loading…</td></tr></tbody>
</table>
<p id="keys-report" role="status" aria-live="polite"></p>
<div id="key-secret" class="secret" hidden>
<p><strong>Copy this key now: it is not shown again.</strong></p>
<p><output id="key-secret-value" aria-label="The new client key"></output> <button type="button" id="key-secret-copy">Copy key</button> <button type="button" id="key-secret-done">Done</button></p>
</div>
<details id="key-editor">
<summary id="key-editor-title">Create a client key</summary>
<form id="key-form" class="fields">
<input type="hidden" id="key-editing">
<label>Name <input id="key-name" required maxlength="128" autocomplete="off"></label>
<label>Tenant <input id="key-tenant" value="default" maxlength="64" pattern="[A-Za-z0-9._:\\-]+" autocomplete="off"></label>
<label>Models (comma-separated, globs; empty for all) <input id="key-models" autocomplete="off" placeholder="gpt-4o*, claude-*"></label>
<label>Requests per minute <input id="key-rpm" type="number" min="1" step="1"></label>
<label>Tokens per minute <input id="key-tpm" type="number" min="1" step="1"></label>
<label>Budget <input id="key-budget" type="number" min="0" step="any"></label>
<label>Budget unit <select id="key-budget-unit"><option value="tokens">tokens</option><option value="requests">requests</option><option value="cost">cost</option></select></label>
<label>Budget period <select id="key-budget-period"><option value="daily">daily (00:00 UTC)</option><option value="monthly">monthly (1st, 00:00 UTC)</option></select></label>
<label>Expires (UTC) <input id="key-expires" type="datetime-local"></label>
<button type="submit" id="key-submit">Create key</button>
</form>
</details>
</section>`;

export const CLIENT_KEYS_SCRIPT = `
const clientKeys = { byId: {} };
function limitsText(k) {
  const parts = [];
  if (k.requests_per_minute) parts.push(k.requests_per_minute + ' req/min');
  if (k.tokens_per_minute) parts.push(k.tokens_per_minute + ' tokens/min');
  return parts.length ? parts.join(', ') : 'none';
}
function budgetCell(k) {
  const td = document.createElement('td');
  if (!k.budget) { td.append(text('none')); return td; }
  const used = k.budget_use ? k.budget_use.used : 0;
  const meter = el('meter', { min: 0, max: k.budget.limit, value: Math.min(used, k.budget.limit), low: k.budget.limit * 0.7, high: k.budget.limit * 0.9, optimum: 0,
    'aria-label': 'Budget of ' + k.name + ': ' + used + ' of ' + k.budget.limit + ' ' + k.budget.unit + ' used' });
  td.append(meter, text(' ' + formatValue(used, '') + ' / ' + formatValue(k.budget.limit, '') + ' ' + k.budget.unit + ' ' + k.budget.period));
  if (k.budget_use) td.title = 'resets ' + new Date(k.budget_use.resets_at).toLocaleString();
  return td;
}
function keyStatus(k) {
  if (k.revoked) return 'revoked';
  if (k.expires_at && Date.parse(k.expires_at) <= Date.now()) return 'expired';
  return null;
}
function renderClientKeys(keys) {
  clientKeys.byId = Object.fromEntries(keys.map((k) => [k.id, k]));
  const rows = keys.map((k) => {
    const tr = el('tr', { 'data-key': k.id });
    const status = keyStatus(k);
    tr.append(cell(k.name + (status ? ' (' + status + ')' : ''), status ? 'bad' : ''), cell(k.tenant), cell(k.hint + '…', 'fields'), cell(k.models ? k.models.join(', ') : 'all'),
      cell(limitsText(k)), budgetCell(k), cell(k.expires_at ? new Date(k.expires_at).toLocaleString() : 'never'), cell(k.last_used_at ? new Date(k.last_used_at).toLocaleString() : 'never'));
    const actions = el('td', { className: 'actions' });
    if (!k.revoked) {
      actions.append(el('button', { type: 'button', 'aria-label': 'Edit the limits of ' + k.name, onclick: () => editKey(k) }, 'Edit'));
      actions.append(actionButton('Revoke', 'Revoke ' + k.name, async () => {
        if (!confirm('Revoke the client key ' + k.name + '? It is refused on every node from now on.')) return '';
        await api('/v0/management/client-keys/' + encodeURIComponent(k.id) + '/revoke', json('POST'));
        return k.name + ' revoked';
      }, 'keys-report'));
    }
    tr.append(actions);
    return tr;
  });
  replaceRows('client-keys', rows, 'No client keys yet. Keys from api-keys in the config are not listed here.', 9);
}
const numberOrNull = (id) => ($(id).value.trim() === '' ? null : Number($(id).value));
function keyFormBody() {
  const models = $('key-models').value.split(',').map((m) => m.trim()).filter(Boolean);
  const budget = numberOrNull('key-budget');
  const expires = $('key-expires').value;
  return {
    name: $('key-name').value.trim(), tenant: $('key-tenant').value.trim() || 'default',
    models: models.length ? models : null, requests_per_minute: numberOrNull('key-rpm'), tokens_per_minute: numberOrNull('key-tpm'),
    budget: budget === null ? null : { limit: budget, unit: $('key-budget-unit').value, period: $('key-budget-period').value },
    expires_at: expires ? new Date(expires + 'Z').toISOString() : null,
  };
}
function resetKeyForm() {
  $('key-form').reset();
  $('key-editing').value = '';
  $('key-submit').textContent = 'Create key';
  $('key-editor-title').textContent = 'Create a client key';
}
function editKey(k) {
  $('key-editing').value = k.id;
  $('key-name').value = k.name; $('key-tenant').value = k.tenant; $('key-models').value = k.models ? k.models.join(', ') : '';
  $('key-rpm').value = k.requests_per_minute || ''; $('key-tpm').value = k.tokens_per_minute || '';
  $('key-budget').value = k.budget ? k.budget.limit : '';
  if (k.budget) { $('key-budget-unit').value = k.budget.unit; $('key-budget-period').value = k.budget.period; }
  $('key-expires').value = k.expires_at ? k.expires_at.slice(0, 16) : '';
  $('key-submit').textContent = 'Save ' + k.name;
  $('key-editor-title').textContent = 'Edit ' + k.name;
  $('key-editor').open = true;
  $('key-name').focus();
}
$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const editing = $('key-editing').value;
  try {
    if (editing) {
      const saved = await api('/v0/management/client-keys/' + encodeURIComponent(editing), json('PATCH', keyFormBody()));
      report('keys-report', saved.name + ' saved', true);
    } else {
      const created = await api('/v0/management/client-keys', json('POST', keyFormBody()));
      $('key-secret-value').textContent = created.secret;
      $('key-secret').hidden = false;
      report('keys-report', 'created ' + created.key.name, true);
    }
    resetKeyForm();
    $('key-editor').open = false;
    await refresh();
  } catch (error) { report('keys-report', error.message, false); }
});
$('key-secret-copy').addEventListener('click', async () => {
  try { await navigator.clipboard.writeText($('key-secret-value').textContent); report('keys-report', 'Copied.', true); }
  catch { getSelection().selectAllChildren($('key-secret-value')); report('keys-report', 'Selected: press Ctrl+C to copy.', true); }
});
$('key-secret-done').addEventListener('click', () => { $('key-secret-value').textContent = ''; $('key-secret').hidden = true; });
onRefresh(async () => {
  try { renderClientKeys((await api('/v0/management/client-keys')).keys); }
  catch (error) { if (error.status === 404 || error.status === 501) replaceRows('client-keys', [], 'Client keys are not available on this gateway.', 9); else throw error; }
});
`;
