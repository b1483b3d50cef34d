/**
 * @module dashboard/overview
 * The overview panels: providers with health, cooldown countdowns and the
 * cool-down / recover actions; the strategy and its recent decisions; and
 * the last five minutes of traffic (requests, errors, latency) on charts
 * with axes.
 */
import { html } from 'hono/html';

export const OVERVIEW_BODY = html`<section aria-labelledby="providers-title" id="overview">
<h2 id="providers-title">Providers</h2>
<table>
<caption class="visually-hidden">Provider health, cooldowns and traffic in the last minute</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Health</th><th scope="col">Cooldown</th><th scope="col">Req/min</th><th scope="col">Err/min</th><th scope="col">Latency</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="providers"><tr><td colspan="7" class="muted">Loading…</td></tr></tbody>
</table>
<p id="providers-report" role="status" aria-live="polite"></p>
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
<section aria-labelledby="charts-title" class="wide">
<h2 id="charts-title">Traffic, last 5 minutes</h2>
<div class="charts">
<figure><figcaption id="rate-title">Requests per second</figcaption><svg class="chart" id="chart-rate" role="img" aria-labelledby="rate-title"></svg></figure>
<figure><figcaption id="errors-title">Errors per second</figcaption><svg class="chart" id="chart-errors" role="img" aria-labelledby="errors-title"></svg></figure>
<figure><figcaption id="latency-title">Mean latency</figcaption><svg class="chart" id="chart-latency" role="img" aria-labelledby="latency-title"></svg></figure>
</div>
<div class="legend" id="legend"></div>
</section>`;

export const OVERVIEW_SCRIPT = `
const overview = { cooldowns: {}, fetchedAt: Date.now() };
function remaining(provider) {
  const period = overview.cooldowns[provider];
  if (!period) return null;
  const left = Math.max(0, Math.round(period.remaining_seconds - (Date.now() - overview.fetchedAt) / 1000));
  const m = Math.floor(left / 60), s = left % 60;
  // The kind (rate_limit, error, manual), and an operator's reason beside it when one was given.
  const why = period.kind && period.kind !== period.reason ? period.kind + ': ' + period.reason : period.reason;
  return (m > 0 ? m + 'm ' : '') + s + 's left (' + why + ')';
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
    const path = '/v0/operations/providers/' + encodeURIComponent(name);
    tr.append(cell(record.in_cooldown
      ? actionButton('Recover', 'End the cooldown of ' + name + ' now', () => api(path + '/recover', json('POST')).then(() => name + ' recovered'), 'providers-report')
      : actionButton('Cool down 5m', 'Cool ' + name + ' down for 5 minutes', () => api(path + '/cooldown', json('POST', { duration: '5m', reason: 'dashboard' })).then(() => name + ' cools down for 5 minutes'), 'providers-report')));
    return tr;
  });
  replaceRows('providers', rows, 'No providers configured.', 7);
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
function renderTraffic(stats) {
  const names = Object.keys(stats.providers);
  const pick = (key) => Object.fromEntries(names.map((n) => [n, stats.providers[n].series[key]]));
  const length = Math.max(0, ...names.map((n) => stats.providers[n].series.requests.length));
  const options = { startMs: (stats.until - Math.max(0, length - 1)) * 1000, stepMs: 1000 };
  drawChart('chart-rate', pick('requests'), { ...options, unit: 'req/s', label: 'Requests per second' });
  drawChart('chart-errors', pick('errors'), { ...options, unit: 'err/s', label: 'Errors per second' });
  drawChart('chart-latency', pick('latency_ms'), { ...options, unit: 'ms', label: 'Mean latency', legend: 'legend' });
}
onRefresh(async () => {
  const [status, cooldown, lb, stats] = await Promise.all([
    api('/v0/operations/providers/status'), api('/v0/operations/cooldown/status'), api('/v0/operations/load_balancing/status'), api('/v0/operations/providers/stats'),
  ]);
  overview.cooldowns = cooldown.cooldown_periods; overview.fetchedAt = Date.now();
  renderProviders(status, stats); renderBalancing(lb, stats); renderTraffic(stats);
  const cooling = cooldown.providers_in_cooldown;
  $('summary').textContent = Object.keys(status.providers).length + ' providers, ' + (cooling.length ? cooling.length + ' cooling down' : 'none cooling down');
});
setInterval(() => {
  for (const node of document.querySelectorAll('.countdown')) { const left = remaining(node.dataset.provider); if (left) node.textContent = left; }
}, 1000);
`;
