/**
 * @module integrationConfig
 * The `code_host` and `tracker` sections of `.agileplus/config.yaml`: which
 * GitHub (or GitHub Enterprise) and how `yard` signs in to it, which
 * tracker (Linear, Plane, or the documented custom REST shape) and its
 * OAuth 2.0 credentials. docs/trackers.md walks through each; secrets may
 * be written `env:NAME`.
 */
import { z } from 'zod';

const secret = z.string().min(1);
const hosts = z.array(z.string().min(1)).default([]);

export const codeHostConfigSchema = z
  .object({
    /** Only GitHub (and GitHub Enterprise Server) for now. */
    kind: z.literal('github').default('github'),
    /** REST API base: `https://api.github.com` (default) or `https://<host>/api/v3` for GitHub Enterprise Server. */
    base_url: z.string().url().optional(),
    /** Web origin of the device flow (`/login/device/code`): default `https://github.com`, or the Enterprise host. */
    web_url: z.string().url().optional(),
    owner: z.string().min(1),
    repo: z.string().min(1),
    /** How to sign in; inferred when left out: `app` with app_id, `oauth_device` with client_id, else `token`. */
    auth: z.enum(['token', 'oauth_device', 'app']).optional(),
    /** `token`: a personal access token (or any user token). */
    token: secret.optional(),
    /** `oauth_device`: the OAuth app's client id (`yard code-host login` runs the device flow). */
    client_id: z.string().min(1).optional(),
    /** `oauth_device`: where the user token is kept, 0600 (default `.agileplus/github-token.json`). */
    token_file: z.string().min(1).optional(),
    /** `oauth_device`: scopes to ask for (default `repo`). */
    scopes: z.array(z.string().min(1)).optional(),
    /** @deprecated The Basic client-id/secret mode could not create issues; the device flow replaced it. Ignored. */
    client_secret: secret.optional(),
    /** `app`: the GitHub App's id, its private key (PEM, or a file), and the installation on this repository. */
    app_id: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).optional(),
    private_key: secret.optional(),
    private_key_file: z.string().min(1).optional(),
    installation_id: z.number().int().positive().optional(),
    /** Private or loopback hosts the SSRF guard lets through (an Enterprise server on the office network). */
    allow_private_hosts: hosts,
  })
  .strict()
  .superRefine((c, ctx) => {
    const auth = codeHostAuthKind(c);
    const need = (field: string, ok: boolean, why: string) => {
      if (!ok) ctx.addIssue({ code: 'custom', path: [field], message: why });
    };
    if (auth === 'token') need('token', c.token !== undefined, 'auth token needs token (e.g. env:GITHUB_TOKEN)');
    if (auth === 'oauth_device') need('client_id', c.client_id !== undefined, "auth oauth_device needs the OAuth app's client_id");
    if (auth === 'app') {
      need('app_id', c.app_id !== undefined, 'auth app needs app_id');
      need('installation_id', c.installation_id !== undefined, 'auth app needs installation_id');
      need(
        'private_key',
        c.private_key !== undefined || c.private_key_file !== undefined,
        'auth app needs private_key or private_key_file',
      );
    }
  });
export type CodeHostConfig = z.infer<typeof codeHostConfigSchema>;

/** The sign-in a code-host section asks for: `auth`, or what its keys imply. */
export function codeHostAuthKind(c: {
  auth?: string | undefined;
  app_id?: unknown;
  client_id?: unknown;
  token?: unknown;
}): 'token' | 'oauth_device' | 'app' {
  if (c.auth === 'token' || c.auth === 'oauth_device' || c.auth === 'app') return c.auth;
  if (c.app_id !== undefined) return 'app';
  if (c.client_id !== undefined && c.token === undefined) return 'oauth_device';
  return 'token';
}

export const trackerConfigSchema = z
  .object({
    /** `rest` (the custom REST shape, the default for configs that name no kind), `linear` or `plane`. */
    kind: z.enum(['rest', 'linear', 'plane']).default('rest'),
    /** rest: the API base; plane: Plane's origin (default `https://api.plane.so`). */
    base_url: z.string().url().optional(),
    /** linear: the GraphQL endpoint (default `https://api.linear.app/graphql`). */
    api_url: z.string().url().optional(),
    /** linear: the team the features go to (its UUID). */
    team_id: z.string().min(1).optional(),
    /** plane: the workspace slug and the project (its UUID). */
    workspace: z.string().min(1).optional(),
    project_id: z.string().min(1).optional(),
    /** How to sign in (default `oauth_client_credentials`, OAuth 2.0 as the specification says). */
    auth: z.enum(['oauth_client_credentials', 'api_key', 'access_token']).default('oauth_client_credentials'),
    token_url: z.string().url().optional(),
    client_id: z.string().min(1).optional(),
    client_secret: secret.optional(),
    scope: z.string().optional(),
    /** plane: the app installation the bot token is for. */
    app_installation_id: z.string().min(1).optional(),
    api_key: secret.optional(),
    access_token: secret.optional(),
    state_mapping: z.record(z.string(), z.string().min(1)).optional(),
    allow_private_hosts: hosts,
  })
  .strict()
  .superRefine((t, ctx) => {
    const need = (field: string, ok: boolean, why: string) => {
      if (!ok) ctx.addIssue({ code: 'custom', path: [field], message: why });
    };
    if (t.kind === 'rest') {
      need('base_url', t.base_url !== undefined, 'the custom REST tracker needs base_url');
      need('auth', t.auth === 'oauth_client_credentials', 'the custom REST tracker signs in with OAuth client credentials');
    }
    if (t.kind === 'linear') need('team_id', t.team_id !== undefined, 'a Linear tracker needs team_id');
    if (t.kind === 'plane') {
      need('workspace', t.workspace !== undefined, 'a Plane tracker needs workspace (the slug)');
      need('project_id', t.project_id !== undefined, 'a Plane tracker needs project_id');
    }
    if (t.auth === 'oauth_client_credentials') {
      need('token_url', t.token_url !== undefined || t.kind !== 'rest', 'OAuth client credentials need token_url');
      need('client_id', t.client_id !== undefined, 'OAuth client credentials need client_id');
      need('client_secret', t.client_secret !== undefined, 'OAuth client credentials need client_secret');
      if (t.kind === 'plane')
        need('app_installation_id', t.app_installation_id !== undefined, "Plane's bot tokens need app_installation_id");
    }
    if (t.auth === 'api_key') need('api_key', t.api_key !== undefined, 'auth api_key needs api_key (e.g. env:LINEAR_API_KEY)');
    if (t.auth === 'access_token') need('access_token', t.access_token !== undefined, 'auth access_token needs access_token');
  });
export type TrackerConfig = z.infer<typeof trackerConfigSchema>;
