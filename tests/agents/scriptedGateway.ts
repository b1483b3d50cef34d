/**
 * @module scriptedGateway
 * The Switchyard gateway the real coding-agent CLIs in these tests talk to:
 * one client key, and one openai-compatible provider in front of the
 * scripted model for every model name, so each CLI's own API family is
 * translated to the model's chat completions. On loopback, no metrics, no
 * response cache (every turn must reach the script).
 */
import { Gateway, parseConfig } from '@switchyard/server-http';
import { GATEWAY_KEY } from './cliSetups.js';

/** Starts the gateway in front of the scripted model at `modelUrl` (`…/v1`); `authDir` holds its credentials. */
export function startScriptedGateway(modelUrl: string, authDir: string): Promise<Gateway> {
  const yaml = `
port: 0
auth-dir: ${authDir}
api-keys: [${GATEWAY_KEY}]
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
providers:
  scripted:
    kind: openai-compatible
    base_url: ${modelUrl}
    models: ['*']
    health_check: { enabled: false }
`;
  return Gateway.start({ config: parseConfig(yaml), logDestination: { write() {} } });
}
