/**
 * @module codeHost
 * `yard code-host login`: signs `yard` in to GitHub as the configured OAuth
 * app through the device flow. The user opens the address shown, enters
 * the code, and the user token is written to `code_host.token_file`
 * (default `.agileplus/github-token.json`, mode 0600, kept out of git);
 * the token itself is never printed.
 */
import { deviceFlowLogin } from '@switchyard/workflow';
import { resolved } from '../config.js';
import { CliError } from '../errors.js';
import { codeHostAuthKind } from '../integrationConfig.js';
import { githubTokenFile, githubWebUrl } from '../integrations.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { withRuntime } from './shared.js';

/** `yard code-host login [--scopes repo,...]`. */
export function codeHostLogin(ctx: CommandContext, opts: { scopes?: string }) {
  return withRuntime(ctx, async (rt) => {
    const section = rt.config.code_host ? resolved(rt.config.code_host) : undefined;
    if (!section || codeHostAuthKind(section) !== 'oauth_device')
      throw new CliError(
        'invalid_argument',
        'no OAuth app to sign in with: set code_host.client_id (and auth: oauth_device) in .agileplus/config.yaml; see docs/trackers.md',
        { field: 'config.code_host.client_id' },
      );
    const tokenFile = githubTokenFile(section, rt.repoRoot);
    const scopes = opts.scopes
      ? opts.scopes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : (section.scopes ?? ['repo']);
    const result = await deviceFlowLogin({
      clientId: section.client_id!,
      tokenFile,
      webUrl: githubWebUrl(section),
      scopes,
      allowPrivateHosts: section.allow_private_hosts,
      // The prompt goes to stderr so `--output json` keeps stdout one JSON document.
      onVerification: (v) =>
        ctx.io.stderr(
          `Open ${v.verification_uri} and enter the code ${v.user_code} (it expires in ${Math.round(v.expires_in / 60)} minutes).\n`,
        ),
    });
    emit(
      ctx.io,
      ctx.globals.output,
      { signed_in: true, token_file: result.tokenFile, scopes: result.scopes },
      {
        text: `signed in to GitHub; the token is in ${result.tokenFile} (mode 0600), scopes: ${result.scopes.join(', ') || '(none)'}`,
      },
    );
  });
}
