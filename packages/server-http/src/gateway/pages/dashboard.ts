/**
 * @module dashboard
 * `GET /dashboard`: providers with health and cooldown countdowns,
 * credentials with quota bars, the strategy and its recent decisions, and
 * live charts of request rate, errors and latency. Plain HTML and one
 * script, no build step, no network but this gateway; it polls the
 * operations API every two seconds with the browser session's cookie.
 */
import { html, raw } from 'hono/html';
import { page } from './layout.js';

const BODY = `<header>
<h1>Switchyard gateway</h1>
<form method="post" action="/dashboard/logout"><button type="submit">Sign out</button></form>
</header>
<p id="summary" class="visually-hidden" aria-live="polite"></p>
<main>
<section aria-labelledby="providers-title">
<h2 id="providers-title">Providers</h2>
<table>
<caption class="visually-hidden">Provider health, cooldowns and traffic in the last minute</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Health</th><th scope="col">Cooldown</th><th scope="col">Req/min</th><th scope="col">Err/min</th><th scope="col">Latency</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="providers"><tr><td colspan="7" class="muted">Loading…</td></tr></tbody>
</table>
</section>
<section aria-labelledby="credentials-title">
<h2 id="credentials-title">Credentials</h2>
<table>
<caption class="visually-hidden">Credentials, their status and quota</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Credential</th><th scope="col">Status</th><th scope="col">Quota</th></tr></thead>
<tbody id="credentials"><tr><td colspan="4" class="muted">Loading…</td></tr></tbody>
</table>
</section>
<section aria-labelledby="strategy-title">
<h2 id="strategy-title">Load balancing</h2>
<p>Strategy <strong id="strategy">…</strong>, <span id="counter">0</span> picks so far.</p>
<table>
<caption class="visually-hidden">Recent routing decisions, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Model</th><th scope="col">Chosen</th><th scope="col">Candidates</th></tr></thead>
<tbody id="decisions"><tr><td colspan="4" class="muted">No requests yet.</td></tr></tbody>
</table>
</section>
<section aria-labelledby="charts-title">
<h2 id="charts-title">Traffic, last 5 minutes</h2>
<h3 class="muted" id="rate-title">Requests per second</h3>
<svg class="chart" id="chart-rate" role="img" aria-labelledby="rate-title" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<h3 class="muted" id="errors-title">Errors per second</h3>
<svg class="chart" id="chart-errors" role="img" aria-labelledby="errors-title" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<h3 class="muted" id="latency-title">Mean latency (ms)</h3>
<svg class="chart" id="chart-latency" role="img" aria-labelledby="latency-title" viewBox="0 0 300 100" preserveAspectRatio="none"></svg>
<div class="legend" id="legend"></div>
</section>
</main>`;

// The page's one script. Written for browsers as they are, with no build step.
const SCRIPT = `
const COLORS = ['#0969da', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#1b7c83', '#953800'];
const state = { cooldowns: {}, fetchedAt: Date.now() };
const $ = (id) => document.getElementById(id);
const text = (value) => document.createTextNode(value == null ? '—' : String(value));
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
async function api(path, init) {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  if (response.status === 401) { location.href = '/dashboard'; throw new Error('signed out'); }
  if (!response.ok) throw Object.assign(new Error(path + ' answered ' + response.status), { status: response.status });
  return response.json();
}
function remaining(provider) {
  const period = state.cooldowns[provider];
  if (!period) return null;
  const left = Math.max(0, Math.round(period.remaining_seconds - (Date.now() - state.fetchedAt) / 1000));
  const m = Math.floor(left / 60), s = left % 60;
  // The kind (rate_limit, error, manual), and an operator's reason beside it when one was given.
  const why = period.kind && period.kind !== period.reason ? period.kind + ': ' + period.reason : period.reason;
  return (m > 0 ? m + 'm ' : '') + s + 's left (' + why + ')';
}
function actionButton(label, description, path, body) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = label;
  button.setAttribute('aria-label', description);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try { await api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined }); await refresh(); }
    finally { button.disabled = false; }
  });
  return button;
}
function renderProviders(status, stats) {
  const rows = Object.entries(status.providers).map(([name, record]) => {
    const tr = document.createElement('tr');
    tr.dataset.provider = name;
    const live = stats.providers[name] || {};
    const health = record.status;
    tr.append(cell(name));
    tr.append(cell(health, health === 'healthy' ? 'ok' : health === 'unhealthy' ? 'bad' : 'muted'));
    const countdown = cell(remaining(name) || 'none', record.in_cooldown ? 'warn' : 'muted');
    countdown.className += ' countdown';
    countdown.dataset.provider = name;
    tr.append(countdown);
    tr.append(cell(live.requests_last_minute ?? record.requests_last_minute));
    tr.append(cell(live.errors_last_minute ?? record.errors_last_minute, (live.errors_last_minute || 0) > 0 ? 'bad' : ''));
    const latency = live.average_latency_ms_last_minute ?? record.average_latency_ms;
    tr.append(cell(latency == null ? null : Math.round(latency) + ' ms'));
    const actions = document.createElement('td');
    actions.append(record.in_cooldown
      ? actionButton('Recover', 'End the cooldown of ' + name + ' now', '/v0/operations/providers/' + encodeURIComponent(name) + '/recover')
      : actionButton('Cool down 5m', 'Cool ' + name + ' down for 5 minutes', '/v0/operations/providers/' + encodeURIComponent(name) + '/cooldown', { duration: '5m', reason: 'dashboard' }));
    tr.append(actions);
    return tr;
  });
  replaceRows('providers', rows, 'No providers configured.', 7);
}
function renderCredentials(auths) {
  if (!auths) { replaceRows('credentials', [], 'Credential management is not available on this gateway.', 4); return; }
  const rows = auths.map((a) => {
    const tr = document.createElement('tr');
    tr.append(cell(a.provider), cell(a.label || a.id), cell(a.status, a.status === 'active' ? 'ok' : 'bad'));
    const quota = document.createElement('td');
    if (a.quota && a.quota.limit) {
      const meter = document.createElement('meter');
      meter.min = 0; meter.max = a.quota.limit; meter.value = a.quota.used; meter.low = a.quota.limit * 0.7; meter.high = a.quota.limit * 0.9; meter.optimum = 0;
      meter.setAttribute('aria-label', 'Quota of ' + (a.label || a.id) + ': ' + a.quota.used + ' of ' + a.quota.limit + ' used');
      quota.append(meter, text(' ' + a.quota.used + ' / ' + a.quota.limit));
    } else quota.append(text('unlimited'));
    tr.append(quota);
    return tr;
  });
  replaceRows('credentials', rows, 'No credentials yet.', 4);
}
function renderBalancing(lb, stats) {
  $('strategy').textContent = lb.strategy;
  $('counter').textContent = lb.counter;
  const rows = stats.recent_decisions.slice(0, 10).map((d) => {
    const tr = document.createElement('tr');
    tr.append(cell(new Date(d.at).toLocaleTimeString()), cell(d.model), cell(d.provider), cell(d.candidates.join(', ')));
    return tr;
  });
  replaceRows('decisions', rows, 'No requests yet.', 4);
}
function chart(id, series, names) {
  const svg = $(id);
  const all = names.flatMap((n) => series[n].filter((v) => v != null));
  const max = Math.max(1, ...all);
  svg.replaceChildren();
  names.forEach((name, i) => {
    const points = series[name].map((v, x) => v == null ? null : x + ',' + (100 - (v / max) * 95).toFixed(1)).filter(Boolean).join(' ');
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', points);
    line.setAttribute('stroke', COLORS[i % COLORS.length]);
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.append(line);
  });
  svg.setAttribute('data-max', String(max));
}
function renderCharts(stats) {
  const names = Object.keys(stats.providers);
  const pick = (key) => Object.fromEntries(names.map((n) => [n, stats.providers[n].series[key]]));
  chart('chart-rate', pick('requests'), names);
  chart('chart-errors', pick('errors'), names);
  chart('chart-latency', pick('latency_ms'), names);
  $('legend').replaceChildren(...names.map((n, i) => { const s = document.createElement('span'); s.style.color = COLORS[i % COLORS.length]; s.textContent = n; return s; }));
}
async function refresh() {
  const [status, cooldown, lb, stats] = await Promise.all([
    api('/v0/operations/providers/status'), api('/v0/operations/cooldown/status'), api('/v0/operations/load_balancing/status'), api('/v0/operations/providers/stats'),
  ]);
  let auths = null;
  try { auths = (await api('/v0/management/auths')).auths; } catch (error) { if (error.status !== 404 && error.status !== 501) throw error; /* a gateway without the credentials routes */ }
  state.cooldowns = cooldown.cooldown_periods; state.fetchedAt = Date.now();
  renderProviders(status, stats); renderCredentials(auths); renderBalancing(lb, stats); renderCharts(stats);
  const cooling = cooldown.providers_in_cooldown;
  $('summary').textContent = Object.keys(status.providers).length + ' providers, ' + (cooling.length ? cooling.length + ' cooling down' : 'none cooling down');
  document.body.dataset.ready = 'true';
}
function tick() {
  for (const el of document.querySelectorAll('.countdown')) { const left = remaining(el.dataset.provider); if (left) el.textContent = left; }
}
refresh().catch((error) => console.error(error));
setInterval(() => refresh().catch((error) => console.error(error)), 2000);
setInterval(tick, 1000);
`;

/** The dashboard page. */
export function dashboardPage() {
  return page({ title: 'Switchyard dashboard', body: raw(BODY), script: SCRIPT });
}

/** What the home page links to; a link is left out when that part is off. */
export interface HomeLinks {
  /** The dashboard, when management is on (a secret key is set). */
  dashboard: boolean;
  /** The metrics URL on the metrics port, when metrics are on. */
  metricsUrl: string | null;
  /** The data plane's base URL (`…/v1`). */
  apiBase: string;
}

/**
 * `GET /`: where a person who opens the gateway's address lands, instead of
 * a JSON 404. Static, no script: links to the dashboard, `/health`, the
 * metrics and the API description.
 */
export function homePage(links: HomeLinks) {
  const item = (href: string, label: string, note: string) =>
    html`<li><a href="${href}">${label}</a> <span class="muted">${note}</span></li>`;
  const items = [
    links.dashboard
      ? item('/dashboard', 'Dashboard', 'providers, traffic and cooldowns; sign in with the management key (remote-management.secret-key)')
      : html`<li>Dashboard: off. <span class="muted">Set remote-management.secret-key to turn it (and the management API) on.</span></li>`,
    item('/health', 'Health', 'whether the gateway can serve, as JSON'),
    links.metricsUrl
      ? item(links.metricsUrl, 'Metrics', 'Prometheus text, on the metrics port')
      : html`<li>Metrics: off. <span class="muted">Set metrics.enabled to serve them.</span></li>`,
    item('/openapi.json', 'Control-plane API', 'OpenAPI 3.1 description of the management and operations routes'),
  ];
  return page({
    title: 'Switchyard gateway',
    body: html`<main>
<section aria-labelledby="home-title">
<h1 id="home-title">Switchyard gateway</h1>
<p>OpenAI-, Anthropic- and Gemini-compatible clients use <code>${links.apiBase}</code> as their base URL, with a key from <code>api-keys</code>.</p>
<ul>
${items.map((entry, i) => [i > 0 ? raw('\n') : '', entry])}
</ul>
<p class="muted">Every configuration key is described in docs/configuration.md of the Switchyard repository.</p>
</section>
</main>`,
  });
}
