/**
 * @module dashboard/page
 * `GET /dashboard`, the gateway's management centre: the overview
 * (providers, cooldowns, load balancing, traffic), credentials, client
 * keys, usage and spend, live logs and the config editor, on one page with a section menu. Plain HTML and
 * one script assembled from the panels' parts, no build step, no network
 * but this gateway: it calls the management and operations APIs with the
 * browser session's cookie, under the page's strict CSP.
 */
import { html } from 'hono/html';
import { page } from '../layout.js';
import { CHART_SCRIPT, CHART_STYLE } from './chart.js';
import { CLIENT_KEYS_BODY, CLIENT_KEYS_SCRIPT } from './clientKeys.js';
import { COMMON_SCRIPT } from './common.js';
import { CONFIG_BODY, CONFIG_SCRIPT } from './config.js';
import { CREDENTIALS_BODY, CREDENTIALS_SCRIPT } from './credentials.js';
import { LOGS_BODY, LOGS_SCRIPT } from './logs.js';
import { OVERVIEW_BODY, OVERVIEW_SCRIPT } from './overview.js';
import { USAGE_BODY, USAGE_SCRIPT } from './usage.js';

const STYLE = `
nav.sections { display: flex; gap: 1rem; flex-wrap: wrap; padding: .5rem 1.25rem; border-bottom: 1px solid var(--line); }
.wide { grid-column: 1 / -1; }
.charts { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); }
.scroll { max-height: 28rem; overflow: auto; }
button { white-space: nowrap; }
figure { margin: 0; } figcaption { color: var(--muted); font-size: .85rem; }
#usage-panel figure { max-width: 48rem; }
.fields { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .75rem 0; }
.fields label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: .2rem; }
input, select, textarea { font: inherit; padding: .3rem .45rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
textarea { width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
td.actions { display: flex; gap: .35rem; flex-wrap: wrap; }
table.logs td { font-size: .85rem; } td.fields { font-family: ui-monospace, monospace; word-break: break-all; color: var(--muted); }
pre.diff { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; overflow: auto; max-height: 24rem; font-size: .85rem; }
pre.diff .added { color: var(--ok); } pre.diff .removed { color: var(--bad); } pre.diff .same { color: var(--muted); }
details summary { cursor: pointer; margin: .5rem 0; }
.secret { border: 1px solid var(--warn); border-radius: 6px; padding: .5rem .75rem; }
.secret output { font-family: ui-monospace, monospace; word-break: break-all; }
${CHART_STYLE}`;

const BODY = html`<header>
<h1>Switchyard gateway</h1>
<form method="post" action="/dashboard/logout"><button type="submit">Sign out</button></form>
</header>
<nav class="sections" aria-label="Sections">
<a href="#overview">Overview</a> <a href="#credentials-panel">Credentials</a> <a href="#keys-panel">Client keys</a> <a href="#usage-panel">Usage</a> <a href="#logs-panel">Logs</a> <a href="#config-panel">Config</a>
</nav>
<p id="summary" class="visually-hidden" aria-live="polite"></p>
<main>
${OVERVIEW_BODY}
${CREDENTIALS_BODY}
${CLIENT_KEYS_BODY}
${USAGE_BODY}
${LOGS_BODY}
${CONFIG_BODY}
</main>`;

// The panels register with the refresh loop (common), then the first refresh runs and repeats.
const SCRIPT = [
  COMMON_SCRIPT,
  CHART_SCRIPT,
  OVERVIEW_SCRIPT,
  CREDENTIALS_SCRIPT,
  CLIENT_KEYS_SCRIPT,
  USAGE_SCRIPT,
  LOGS_SCRIPT,
  CONFIG_SCRIPT,
  `
refresh();
setInterval(refresh, 2000);
`,
].join('\n');

/** The dashboard page. */
export function dashboardPage() {
  return page({ title: 'Switchyard dashboard', body: BODY, script: SCRIPT, style: STYLE });
}
