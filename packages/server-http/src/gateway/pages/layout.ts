/**
 * @module layout
 * The frame every gateway page shares: plain HTML, one small stylesheet,
 * no external resources (the pages work offline), a strict
 * Content-Security-Policy whose only script is the page's own (by nonce).
 * Pages are built with `hono/html`'s `html` tag, which escapes every value
 * put into them; markup that is not to be escaped is marked with `raw`.
 */
import { randomBytes } from 'node:crypto';
import { html, raw } from 'hono/html';

/** A fragment of a page built with the `html` tag of `hono/html` (its values escaped), or marked `raw`. */
export type Html = ReturnType<typeof html>;

const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --line: #d1d9e0; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --line: #3d444d; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.15rem; margin: 0; }
main { padding: 1rem 1.25rem 2rem; display: grid; gap: 1.25rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 34rem), 1fr)); }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; min-width: 0; }
section h2 { font-size: 1rem; margin: 0 0 .75rem; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); } .muted { color: var(--muted); }
button, input[type=submit] { font: inherit; padding: .3rem .7rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
button:focus-visible, input:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
meter { width: 8rem; height: 1rem; }
.legend { display: flex; gap: 1rem; flex-wrap: wrap; font-size: .85rem; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: .8rem; height: .2rem; margin-right: .3rem; vertical-align: middle; background: currentColor; }
.login { max-width: 24rem; margin: 10vh auto; padding: 1.5rem; }
.login label { display: block; margin-bottom: .3rem; font-weight: 600; }
.login input[type=password] { width: 100%; font: inherit; padding: .45rem; margin-bottom: 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.error { color: var(--bad); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

/** A complete page; `script` runs, and `style` (added to the shared sheet) applies, under the page's CSP nonce. */
export function page(options: { title: string; body: Html; script?: string; style?: string }): { html: string; csp: string } {
  const nonce = randomBytes(16).toString('base64');
  const text = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${raw(STYLE + (options.style ?? ''))}</style>
</head>
<body>
${options.body}
${options.script ? html`<script nonce="${nonce}">${raw(options.script)}</script>` : ''}
</body>
</html>`;
  // No value above is a promise, so the page is ready now.
  if (text instanceof Promise) throw new TypeError('a page must not be built from promises');
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
  return { html: text.toString(), csp };
}
