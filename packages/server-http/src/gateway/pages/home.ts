/**
 * @module home
 * `GET /`: where a person who opens the gateway's address lands, instead of
 * a JSON 404. Static, no script: links to the dashboard, `/health`, the
 * metrics and the API description.
 */
import { html, raw } from 'hono/html';
import { page } from './layout.js';

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
