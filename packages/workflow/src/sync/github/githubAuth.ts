/**
 * @module githubAuth
 * The three ways the code-host adapter signs in to GitHub: a token (a
 * personal access token, or a user token an OAuth app obtained), an OAuth
 * application's user token obtained through the device flow and kept in a
 * 0600 file, and a GitHub App installation (JWT exchanged for installation
 * tokens by `@octokit/auth-app`). The device flow itself
 * (`@octokit/auth-oauth-device`) runs once, interactively, in
 * {@link deviceFlowLogin}; the adapter only reads the file it wrote.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { writeFileAtomic } from '@switchyard/runtime/fs';
import { z } from 'zod';
import { InvalidArgumentError, WorkflowError } from '../../errors.js';
import { checkedBaseUrl, guardedDispatcher, guardedFetch, type OutboundPolicy } from '../outbound.js';

/** How the code-host adapter authenticates. */
export type GitHubAuth =
  /** A personal access token, or any user token. */
  | { type: 'token'; token: string }
  /** @deprecated The same as `token` (the name the first adapter used). */
  | { type: 'oauth_token'; token: string }
  /** An OAuth app's user token from the device flow, read from `tokenFile` (see {@link deviceFlowLogin}). */
  | { type: 'oauth_device'; clientId: string; tokenFile: string }
  /** A GitHub App installation: JWTs signed with `privateKey` (PEM) are exchanged for installation tokens. */
  | { type: 'app'; appId: number | string; privateKey: string; installationId: number };

/** What the device flow stores: the token and what it was issued for. Never printed. */
const storedTokenSchema = z.object({
  token: z.string().min(1),
  token_type: z.string().default('bearer'),
  scopes: z.array(z.string()).default([]),
  client_id: z.string().min(1),
  created_at: z.string(),
});
export type StoredDeviceToken = z.infer<typeof storedTokenSchema>;

/**
 * Reads a device-flow token file. A missing file, a file for another
 * client id, or one that is not a token file is a clear `invalid_argument`.
 */
export async function readDeviceToken(tokenFile: string, clientId: string): Promise<StoredDeviceToken> {
  let text: string;
  try {
    text = await readFile(tokenFile, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError('code_host.token_file', `no GitHub token at ${tokenFile}: sign in first with \`yard code-host login\``, {
      cause: error,
    });
  }
  const parsed = storedTokenSchema.safeParse(
    (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success) throw new InvalidArgumentError('code_host.token_file', `${tokenFile} is not a token file written by yard`);
  if (parsed.data.client_id !== clientId)
    throw new InvalidArgumentError(
      'code_host.token_file',
      `${tokenFile} holds a token of another OAuth app; sign in again with \`yard code-host login\``,
    );
  return parsed.data;
}

/** What the user is asked to do during the device flow. */
export interface DeviceVerification {
  verification_uri: string;
  user_code: string;
  expires_in: number;
}

/** Options of {@link deviceFlowLogin}. */
export interface DeviceFlowOptions extends OutboundPolicy {
  clientId: string;
  /** Where the token is written (0600, atomically). */
  tokenFile: string;
  /** GitHub's web origin, where `/login/device/code` lives (default `https://github.com`). */
  webUrl?: string;
  /** OAuth scopes (default `repo`: issues, pull requests, statuses and checks of private repositories). */
  scopes?: string[];
  /** Shows the user the code and the address to enter it at. */
  onVerification: (verification: DeviceVerification) => void;
}

/**
 * Runs GitHub's OAuth device flow (RFC 8628) for an OAuth app: asks for a
 * device code, shows the user where to enter it, polls until they approve,
 * and writes the user token to `tokenFile` (mode 0600, atomically).
 *
 * @example
 * ```ts
 * await deviceFlowLogin({ clientId: 'Ov23li…', tokenFile: '.agileplus/github-token.json', onVerification: (v) => console.log(v.verification_uri, v.user_code) });
 * ```
 */
export async function deviceFlowLogin(options: DeviceFlowOptions): Promise<{ scopes: string[]; tokenFile: string }> {
  const webUrl = checkedBaseUrl('webUrl', options.webUrl ?? 'https://github.com', options);
  const [{ Octokit }, { createOAuthDeviceAuth }] = await Promise.all([import('@octokit/rest'), import('@octokit/auth-oauth-device')]);
  const web = new Octokit({ baseUrl: webUrl, request: { fetch: guardedFetch(guardedDispatcher(options)) } });
  const auth = createOAuthDeviceAuth({
    clientType: 'oauth-app',
    clientId: options.clientId,
    scopes: options.scopes ?? ['repo'],
    request: web.request,
    onVerification: (v) =>
      options.onVerification({ verification_uri: v.verification_uri, user_code: v.user_code, expires_in: v.expires_in }),
  });
  let token: { token: string; scopes: string[] };
  try {
    token = (await auth({ type: 'oauth' })) as { token: string; scopes: string[] };
  } catch (error) {
    throw new WorkflowError('upstream_failed', `the GitHub device flow failed: ${(error as Error).message}`, { cause: error });
  }
  const stored: StoredDeviceToken = {
    token: token.token,
    token_type: 'bearer',
    scopes: token.scopes,
    client_id: options.clientId,
    created_at: new Date().toISOString(),
  };
  await writeFileAtomic(dirname(options.tokenFile), basename(options.tokenFile), `${JSON.stringify(stored)}\n`, { mode: 0o600 });
  return { scopes: token.scopes, tokenFile: options.tokenFile };
}
