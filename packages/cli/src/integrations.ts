/**
 * @module integrations
 * Builds the code-host adapter, the tracker adapter and the tracker's
 * webhook verifier from the config's `code_host`, `tracker` and
 * `webhook_secret`. Relative files (the device-flow token file, an App's
 * private key file) are read from the repository root.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  customWebhookVerifier,
  type GitHubAuth,
  GitHubCodeHostAdapter,
  LinearTrackerAdapter,
  linearWebhookVerifier,
  PlaneTrackerAdapter,
  planeWebhookVerifier,
  RestTrackerAdapter,
  type TrackerAdapter,
  type TrackerAuth,
  type WebhookVerifier,
} from '@switchyard/workflow';
import { resolved } from './config.js';
import { CliError } from './errors.js';
import { type CodeHostConfig, codeHostAuthKind, type TrackerConfig } from './integrationConfig.js';

/** Where the device flow keeps the GitHub user token unless `code_host.token_file` says otherwise. */
export const DEFAULT_GITHUB_TOKEN_FILE = join('.agileplus', 'github-token.json');

const inRepo = (repoRoot: string, path: string) => (isAbsolute(path) ? path : join(repoRoot, path));

/** The device-flow token file of a code-host section. */
export function githubTokenFile(section: CodeHostConfig, repoRoot: string): string {
  return inRepo(repoRoot, section.token_file ?? DEFAULT_GITHUB_TOKEN_FILE);
}

/** The web origin of GitHub's device flow: `web_url`, the Enterprise host of `base_url`, or github.com. */
export function githubWebUrl(section: CodeHostConfig): string {
  if (section.web_url) return section.web_url;
  if (section.base_url && !/^https:\/\/api\.github\.com\/?$/.test(section.base_url)) return new URL(section.base_url).origin;
  return 'https://github.com';
}

function githubAuth(c: CodeHostConfig, repoRoot: string): GitHubAuth {
  const kind = codeHostAuthKind(c);
  if (kind === 'oauth_device') return { type: 'oauth_device', clientId: c.client_id!, tokenFile: githubTokenFile(c, repoRoot) };
  if (kind === 'app') {
    let privateKey = c.private_key;
    if (privateKey === undefined) {
      const file = inRepo(repoRoot, c.private_key_file!);
      try {
        privateKey = readFileSync(file, 'utf8');
      } catch (error) {
        throw new CliError(
          'invalid_argument',
          `config code_host.private_key_file: cannot read ${file}`,
          { field: 'config.code_host.private_key_file' },
          { cause: error },
        );
      }
    }
    return { type: 'app', appId: c.app_id!, privateKey, installationId: c.installation_id! };
  }
  return { type: 'token', token: c.token! };
}

/** The GitHub adapter of the config, or undefined without a `code_host` section. */
export function codeHostFrom(section: CodeHostConfig | undefined, repoRoot: string): GitHubCodeHostAdapter | undefined {
  if (!section) return undefined;
  const c = resolved(section);
  return new GitHubCodeHostAdapter({
    ...(c.base_url ? { baseUrl: c.base_url } : {}),
    owner: c.owner,
    repo: c.repo,
    auth: githubAuth(c, repoRoot),
    allowPrivateHosts: c.allow_private_hosts,
  });
}

function trackerAuth(t: TrackerConfig, defaultTokenUrl: string): TrackerAuth {
  if (t.auth === 'api_key') return { type: 'api_key', apiKey: t.api_key! };
  if (t.auth === 'access_token') return { type: 'access_token', token: t.access_token! };
  return {
    type: 'oauth_client_credentials',
    tokenUrl: t.token_url ?? defaultTokenUrl,
    clientId: t.client_id!,
    clientSecret: t.client_secret!,
    ...(t.scope ? { scope: t.scope } : {}),
    ...(t.app_installation_id ? { extraParams: { app_installation_id: t.app_installation_id } } : {}),
  };
}

/** The tracker adapter of the config, or undefined without a `tracker` section. */
export function trackerFrom(section: TrackerConfig | undefined): TrackerAdapter | undefined {
  if (!section) return undefined;
  const t = resolved(section);
  const common = { allowPrivateHosts: t.allow_private_hosts, ...(t.state_mapping ? { stateMapping: t.state_mapping } : {}) };
  if (t.kind === 'linear') {
    return new LinearTrackerAdapter({
      ...common,
      ...(t.api_url ? { apiUrl: t.api_url } : {}),
      teamId: t.team_id!,
      auth: trackerAuth(t, 'https://api.linear.app/oauth/token'),
    });
  }
  if (t.kind === 'plane') {
    const origin = t.base_url ?? 'https://api.plane.so';
    return new PlaneTrackerAdapter({
      ...common,
      baseUrl: origin,
      workspaceSlug: t.workspace!,
      projectId: t.project_id!,
      auth: trackerAuth(t, `${origin.replace(/\/$/, '')}/auth/o/token/`),
    });
  }
  return new RestTrackerAdapter({
    ...common,
    baseUrl: t.base_url!,
    oauth: {
      tokenUrl: t.token_url!,
      clientId: t.client_id!,
      clientSecret: t.client_secret!,
      ...(t.scope ? { scope: t.scope } : {}),
    },
  });
}

/** How `POST /webhooks/tracker` verifies deliveries: the configured tracker's scheme with `webhook_secret`. */
export function webhookVerifierFrom(section: TrackerConfig | undefined, webhookSecret: string | undefined): WebhookVerifier | undefined {
  if (webhookSecret === undefined) return undefined;
  const secret = resolved(webhookSecret);
  if (section?.kind === 'linear') return linearWebhookVerifier(secret);
  if (section?.kind === 'plane') return planeWebhookVerifier(secret);
  return customWebhookVerifier({ secret });
}
