/**
 * @module dashboard/usage
 * Usage and spend: a chart of requests, tokens or cost over a chosen range,
 * one line per client key, tenant, provider or model, with the totals per
 * group beside it and the same report as CSV.
 */
import { html } from 'hono/html';

export const USAGE_BODY = html`<section aria-labelledby="usage-title" id="usage-panel" class="wide">
<h2 id="usage-title">Usage and spend</h2>
<form id="usage-controls" class="fields">
<label>Range <select id="usage-range"><option value="3600000">last hour</option><option value="86400000" selected>last 24 hours</option><option value="604800000">last 7 days</option><option value="2592000000">last 30 days</option></select></label>
<label>By <select id="usage-group"><option value="key">client key</option><option value="tenant">tenant</option><option value="provider">provider</option><option value="model">model</option></select></label>
<label>Show <select id="usage-measure"><option value="requests">requests</option><option value="tokens">tokens (in + out)</option><option value="cost">cost</option></select></label>
<a id="usage-csv" href="/v0/management/usage?format=csv" download="usage.csv">Download CSV</a>
</form>
<figure><figcaption id="usage-chart-title">Requests per bucket</figcaption><svg class="chart" id="chart-usage" role="img" aria-labelledby="usage-chart-title"></svg></figure>
<div class="legend" id="usage-legend"></div>
<table>
<caption class="visually-hidden">Totals per group over the range</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Requests</th><th scope="col">Input tokens</th><th scope="col">Output tokens</th><th scope="col">Cost</th><th scope="col">Cache hits</th><th scope="col">Errors</th></tr></thead>
<tbody id="usage-totals"><tr><td colspan="7" class="muted">Loading…</td></tr></tbody>
</table>
</section>`;

export const USAGE_SCRIPT = `
const MEASURES = { requests: (r) => r.requests, tokens: (r) => r.input_tokens + r.output_tokens, cost: (r) => r.cost };
function usageParams() {
  const to = Math.ceil(Date.now() / 60_000) * 60_000;
  return new URLSearchParams({ from: String(to - Number($('usage-range').value)), to: String(to), group_by: $('usage-group').value });
}
function renderUsage(report) {
  const measure = MEASURES[$('usage-measure').value];
  const stepMs = report.step_seconds * 1000, from = Date.parse(report.from), to = Date.parse(report.to);
  const buckets = Math.max(1, Math.round((to - from) / stepMs));
  const series = {};
  for (const group of report.groups) series[group.label] = new Array(buckets).fill(0);
  for (const point of report.series) {
    const i = Math.floor((Date.parse(point.start) - from) / stepMs);
    if (series[point.label] && i >= 0 && i < buckets) series[point.label][i] += measure(point);
  }
  const unit = $('usage-measure').value === 'cost' ? 'cost' : $('usage-measure').value;
  $('usage-chart-title').textContent = $('usage-measure').selectedOptions[0].textContent + ' per ' + (report.step_seconds >= 3600 ? report.step_seconds / 3600 + ' h' : report.step_seconds / 60 + ' min');
  drawChart('chart-usage', series, { startMs: from, stepMs, unit, label: $('usage-chart-title').textContent, legend: 'usage-legend' });
  const rows = report.groups.map((g) => {
    const tr = el('tr', { 'data-group': g.group });
    tr.append(cell(g.label), cell(g.requests), cell(g.input_tokens), cell(g.output_tokens), cell(Math.round(g.cost * 10000) / 10000), cell(g.cache_hits), cell(g.errors, g.errors ? 'bad' : ''));
    return tr;
  });
  replaceRows('usage-totals', rows, 'No use in this range.', 7);
}
async function refreshUsage() {
  const params = usageParams();
  $('usage-csv').href = '/v0/management/usage?' + params + '&format=csv';
  try { renderUsage(await api('/v0/management/usage?' + params)); }
  catch (error) { if (error.status === 404 || error.status === 501) replaceRows('usage-totals', [], 'Usage is not recorded on this gateway.', 7); else throw error; }
}
for (const id of ['usage-range', 'usage-group', 'usage-measure']) $(id).addEventListener('change', () => refreshUsage().catch((error) => console.error(error)));
onRefresh(refreshUsage);
`;
