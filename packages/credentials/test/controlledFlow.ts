/**
 * @module controlledFlow
 * A device sign-in flow the sign-in tests drive: its prompt is a fixed user
 * code, and each sign-in stays pending until the test approves it or its
 * signal aborts (a user who never comes back).
 */
import { CredentialsError } from '../src/errors.js';
import type { AuthFlow, SignedIn } from '../src/oauth/authFlow.js';

export const DEVICE_CODE = 'device-code-never-shared';
export const ACCESS_TOKEN = 'access-token-never-shared';

/** A flow the test drives: each sign-in waits until `approve` is called, or its signal aborts. */
export function controlledFlow() {
  const runs: { signal: AbortSignal; approve(): void }[] = [];
  const flow: AuthFlow = {
    name: 'acme',
    provider: 'acme',
    async start(_options, context) {
      return {
        prompt: {
          user_code: 'WDJB-MJHT',
          verification_uri: 'https://auth.example/device',
          verification_uri_complete: null,
          expires_at: new Date(context.scheduler.now() + 15 * 60_000).toISOString(),
          interval_ms: 5000,
        },
        complete: (signal) =>
          new Promise<SignedIn>((resolve, reject) => {
            // The device code lives here, with the flow, and must never reach the directory.
            const deviceCode = DEVICE_CODE;
            signal?.addEventListener('abort', () => reject(new CredentialsError('aborted', `stopped polling ${deviceCode.length}`)), {
              once: true,
            });
            runs.push({ signal: signal!, approve: () => resolve({ token: ACCESS_TOKEN, refresh_token: 'refresh-never-shared' }) });
          }),
      };
    },
    async refresh() {
      throw new CredentialsError('refresh_rejected', 'not used here');
    },
  };
  return { flow, runs };
}
