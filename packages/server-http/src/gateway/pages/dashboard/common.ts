/**
 * @module dashboard/common
 * The helpers every panel of the dashboard's script shares: element lookup,
 * table cells built as text (never as HTML, so no value from the API can
 * become markup), the API call with the browser session's cookie, buttons
 * that run an action and report its outcome, and the refresh loop that
 * panels join. Plain browser JavaScript, as a string: no build step.
 */
export const COMMON_SCRIPT = `
const $ = (id) => document.getElementById(id);
const text = (value) => document.createTextNode(value == null ? '—' : String(value));
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value == null || value === false) continue;
    if (name === 'className') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) node.append(typeof child === 'string' || typeof child === 'number' ? text(child) : child);
  return node;
}
function cell(content, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.append(typeof content === 'string' || typeof content === 'number' || content == null ? text(content) : content);
  return td;
}
function replaceRows(id, rows, empty, columns) {
  const body = $(id);
  body.replaceChildren();
  if (rows.length === 0) { const tr = document.createElement('tr'); tr.append(cell(empty, 'muted')); tr.firstChild.colSpan = columns; body.append(tr); return; }
  for (const row of rows) body.append(row);
}
class ApiFailure extends Error {
  constructor(path, status, body) {
    const error = body && body.error;
    // Bad input is {field, issues: [{field, message}]} on every control plane; a message may already say it all.
    const issues = error && error.details && Array.isArray(error.details.issues) ? error.details.issues : [];
    const fields = issues.map((i) => i.field + ': ' + i.message).join('; ');
    const message = error && error.message ? error.message : path + ' answered ' + status;
    super(fields && !message.includes(fields) ? message + ' (' + fields + ')' : message);
    this.status = status; this.body = body;
  }
}
async function api(path, init) {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  if (response.status === 401) { location.href = '/dashboard'; throw new Error('signed out'); }
  const type = response.headers.get('content-type') || '';
  const body = type.includes('json') ? await response.json() : await response.text();
  if (!response.ok) throw new ApiFailure(path, response.status, body);
  return body;
}
const json = (method, body) => ({ method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
/** Shows what an action did (or why it failed) in the panel's live region. */
function report(id, message, ok) {
  const out = $(id);
  if (!out) return;
  out.textContent = message;
  out.className = ok ? 'ok' : 'error';
}
function actionButton(label, description, run, reportId) {
  const button = el('button', { type: 'button', 'aria-label': description }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try { const message = await run(); if (reportId && message) report(reportId, message, true); await refresh(); }
    catch (error) { if (reportId) report(reportId, error.message, false); else console.error(error); }
    finally { button.disabled = false; }
  });
  return button;
}
const refreshers = [];
/** Panels that show live state register here; the page refreshes them together every two seconds. */
function onRefresh(panel) { refreshers.push(panel); }
async function refresh() {
  const results = await Promise.allSettled(refreshers.map((panel) => panel()));
  for (const result of results) if (result.status === 'rejected' && result.reason.message !== 'signed out') console.error(result.reason);
  document.body.dataset.ready = 'true';
}
`;
