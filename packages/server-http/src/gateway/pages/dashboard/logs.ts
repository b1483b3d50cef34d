/**
 * @module dashboard/logs
 * Live logs: the gateway's log lines as they are written (the management
 * API's server-sent event stream, with the browser session's cookie),
 * filtered in the page by level and by text, with pause and resume. The
 * page keeps the newest 500 lines and shows up to 100 that match; the stream tells it when a slow page
 * missed some.
 */
import { html } from 'hono/html';

export const LOGS_BODY = html`<section aria-labelledby="logs-title" id="logs-panel" class="wide">
<h2 id="logs-title">Live logs</h2>
<form id="log-filters" class="fields" role="search">
<label>Level <select id="log-level"><option value="0">all</option><option value="30" selected>info and above</option><option value="40">warnings and errors</option><option value="50">errors</option></select></label>
<label>Contains <input id="log-text" type="search" autocomplete="off" placeholder="request id, provider, message…"></label>
<button type="button" id="log-pause" aria-pressed="false">Pause</button>
<span id="log-state" class="muted" role="status" aria-live="polite">Connecting…</span>
</form>
<div class="scroll" tabindex="0" aria-label="Log lines">
<table class="logs">
<caption class="visually-hidden">Log lines, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Level</th><th scope="col">Message</th><th scope="col">Fields</th></tr></thead>
<tbody id="log-lines"><tr><td colspan="4" class="muted">No lines yet.</td></tr></tbody>
</table>
</div>
</section>`;

export const LOGS_SCRIPT = `
const logs = { lines: [], paused: false, dropped: 0, source: null };
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const LEVEL_NUMBERS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
/** A line's level as a number, whether the logger wrote pino's number or its label. */
const levelNumber = (level) => (typeof level === 'number' ? level : LEVEL_NUMBERS[level] || 30);
function parseLine(data) {
  try { const entry = JSON.parse(data); return typeof entry === 'object' && entry ? entry : { msg: String(entry) }; }
  catch { return { msg: data }; }
}
function logMatches(entry, raw) {
  const level = Number($('log-level').value);
  if (level && levelNumber(entry.level) < level) return false;
  const needle = $('log-text').value.trim().toLowerCase();
  return !needle || raw.toLowerCase().includes(needle);
}
function renderLogs() {
  const shown = logs.lines.filter((line) => logMatches(line.entry, line.raw)).slice(-100).reverse();
  const rows = shown.map(({ entry }) => {
    const level = LEVELS[levelNumber(entry.level)] || 'info';
    const { time, timestamp, level: _l, msg, pid: _p, hostname: _h, service: _s, ...fields } = entry;
    const at = time ?? timestamp;
    const details = Object.entries(fields).map(([k, v]) => k + '=' + (typeof v === 'string' ? v : JSON.stringify(v))).join(' ');
    const tr = el('tr', { 'data-level': level });
    tr.append(cell(at ? new Date(at).toLocaleTimeString() : null), cell(level, level === 'error' || level === 'fatal' ? 'bad' : level === 'warn' ? 'warn' : 'muted'), cell(msg || ''), cell(details.length > 400 ? details.slice(0, 400) + '…' : details, 'fields'));
    return tr;
  });
  replaceRows('log-lines', rows, logs.lines.length ? 'No line matches the filters.' : 'No lines yet.', 4);
}
function followLogs() {
  const source = new EventSource('/v0/management/logs?follow=true&lines=200');
  logs.source = source;
  source.addEventListener('open', () => { $('log-state').textContent = 'Live.'; });
  source.addEventListener('log', (event) => {
    logs.lines.push({ raw: event.data, entry: parseLine(event.data) });
    if (logs.lines.length > 500) logs.lines.splice(0, logs.lines.length - 500);
    if (!logs.paused) renderLogs();
  });
  source.addEventListener('dropped', (event) => {
    logs.dropped += (parseLine(event.data).dropped || 0);
    $('log-state').textContent = 'Live; ' + logs.dropped + ' lines were missed while the page was behind.';
  });
  source.addEventListener('error', () => { $('log-state').textContent = 'Disconnected; retrying…'; });
}
$('log-level').addEventListener('change', renderLogs);
$('log-text').addEventListener('input', renderLogs);
$('log-pause').addEventListener('click', () => {
  logs.paused = !logs.paused;
  $('log-pause').textContent = logs.paused ? 'Resume' : 'Pause';
  $('log-pause').setAttribute('aria-pressed', String(logs.paused));
  if (!logs.paused) renderLogs();
});
followLogs();
`;
