/**
 * @module docsPage
 * `GET /docs`: a readable API reference rendered on the server from the same
 * OpenAPI document as `/openapi.json` (so it cannot drift), plus the event
 * stream's frames, which OpenAPI cannot describe. Built with `hono/html`'s
 * `html` tag, which escapes every value put into the page.
 */
import { html, raw } from 'hono/html';
import { BASE_CSS } from './html.js';

type Html = ReturnType<typeof html>;

type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function schemaText(schema: unknown): Html | '' {
  if (!schema || typeof schema !== 'object') return '';
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').at(-1) ?? ref;
    return html`<a href="#schema-${name}"><code>${name}</code></a>`;
  }
  return html`<pre>${JSON.stringify(schema, null, 2)}</pre>`;
}

function contentText(content: unknown): Html[] {
  if (!content || typeof content !== 'object') return [];
  return Object.entries(content as Json).map(
    ([type, media]) => html`<div><code>${type}</code> ${schemaText((media as Json)?.schema)}</div>`,
  );
}

function operationHtml(path: string, method: string, operation: Json): Html {
  const responses = Object.entries((operation.responses ?? {}) as Json).map(
    ([status, response]) =>
      html`<tr><td><code>${status}</code></td><td>${String((response as Json).description ?? '')}</td><td>${contentText((response as Json).content)}</td></tr>`,
  );
  const parameters = ((operation.parameters ?? []) as Json[]).map(
    (p) => html`<li><code>${String(p.name)}</code> (${String(p.in)})${p.required ? ', required' : ''}</li>`,
  );
  const body = (operation.requestBody as Json | undefined)?.content;
  const id = `${method}-${path.replace(/[^a-z0-9]+/gi, '-')}`;
  return html`<section class="op" id="${id}" aria-labelledby="${id}-title">
<h3 id="${id}-title"><span class="method">${method.toUpperCase()}</span> <code>${path}</code> · ${String(operation.summary ?? '')}</h3>
<p>${String(operation.description ?? '')}</p>
${parameters.length > 0 ? html`<h4>Parameters</h4><ul>${parameters}</ul>` : ''}
${body ? html`<h4>Request body</h4>${contentText(body)}` : ''}
<h4>Responses</h4>
<table><thead><tr><th scope="col">Status</th><th scope="col">Meaning</th><th scope="col">Body</th></tr></thead><tbody>${responses}</tbody></table>
</section>`;
}

const EVENTS_HTML = raw(`<section id="events-format" aria-labelledby="events-title">
<h2 id="events-title">Event stream frames</h2>
<p><code>GET /events</code> sends Server-Sent Events. A frame has an <code>event</code> name, one line of JSON <code>data</code> and, except in the replay a new subscriber starts with, an <code>id</code> (send the last one back as <code>Last-Event-ID</code> to resume):</p>
<pre>id: 5f3a9c01-12
event: message_update
data: {"id":3,"role":"agent","content":"42","time":"2026-01-01T12:00:00.000Z","message":"42"}

id: 5f3a9c01-13
event: status_change
data: {"status":"stable","agent_type":"generic","transport":"pty"}

id: 5f3a9c01-14
event: agent_error
data: {"message":"the agent exited (code 1)","fatal":true,"time":"2026-01-01T12:00:01.000Z"}</pre>
<p>A new subscriber first receives every message (without ids), then the status (with the id to resume from). An agent message is sent again, whole, each time it grows; a subscriber that reads slowly gets it once per read, in its current form, rather than every version. Comments (<code>: ping</code>) keep idle connections open.</p>
</section>`);

/** Renders the reference page from an OpenAPI document. */
export function docsPageHtml(document: Json): string {
  const info = (document.info ?? {}) as Json;
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] as Json })),
  );
  const schemas = Object.entries(((document.components as Json | undefined)?.schemas ?? {}) as Json);
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${String(info.title ?? 'API')} · reference</title>
<style>${raw(BASE_CSS)}
body { max-width: 62rem; margin: 0 auto; padding: 1rem 1.25rem 4rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid var(--line); } h3 { font-size: 1.05rem; }
.op { border: 1px solid var(--line); border-radius: 0.5rem; padding: 0 1rem 0.5rem; margin: 1rem 0; }
.method { display: inline-block; min-width: 3.5rem; font-weight: 700; color: var(--accent); }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; vertical-align: top; border-top: 1px solid var(--line); padding: 0.3rem 0.5rem; }
pre { background: var(--agent); padding: 0.75rem; border-radius: 0.4rem; overflow-x: auto; }
nav ul { columns: 2; }
</style>
</head>
<body>
<header>
<h1>${String(info.title ?? 'API')}</h1>
<p>${String(info.description ?? '')} Machine-readable: <a href="openapi.json"><code>/openapi.json</code></a>. Talk to the agent: <a href="chat"><code>/chat</code></a>.</p>
<p>Errors always have the shape <code>{"error": {"code", "message", "details"?}}</code>; <code>details</code> lists the fields that failed.</p>
</header>
<nav aria-label="Endpoints"><ul>${operations.map(
    ({ path, method }) => html`<li><a href="#${`${method}-${path.replace(/[^a-z0-9]+/gi, '-')}`}">${method.toUpperCase()} ${path}</a></li>`,
  )}</ul></nav>
<main>
<h2>Endpoints</h2>
${operations.map(({ path, method, operation }, i) => [i > 0 ? raw('\n') : '', operationHtml(path, method, operation)])}
${EVENTS_HTML}
<h2>Schemas</h2>
${schemas.map(([name, schema], i) => [
  i > 0 ? raw('\n') : '',
  html`<section id="schema-${name}"><h3><code>${name}</code></h3><pre>${JSON.stringify(schema, null, 2)}</pre></section>`,
])}
</main>
</body>
</html>`;
  // No value above is a promise, so the page is ready now.
  if (page instanceof Promise) throw new TypeError('the reference page must not be built from promises');
  return page.toString();
}
