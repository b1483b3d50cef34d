/**
 * @module pages
 * The agent server's pages: `/openapi.json`, `/docs`, `/chat` (and its
 * script), and `/` which leads to the chat.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { CHAT_SCRIPT, chatPageHtml } from './chatPage.js';
import { docsPageHtml } from './docsPage.js';
import { PAGE_HEADERS } from './html.js';

/** Registers the pages on `app`. */
export function registerPages(
  app: OpenAPIHono,
  options: { openApiDocument: () => Record<string, unknown>; apiKeyRequired: boolean },
): void {
  app.get('/openapi.json', (c) => c.json(options.openApiDocument()));
  app.get('/docs', (c) => c.body(docsPageHtml(options.openApiDocument()), 200, PAGE_HEADERS));
  app.get('/chat', (c) => c.body(chatPageHtml({ apiKeyRequired: options.apiKeyRequired }), 200, PAGE_HEADERS));
  app.get('/chat.js', (c) =>
    c.body(CHAT_SCRIPT, 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    }),
  );
  app.get('/', (c) => c.redirect('/chat'));
}
