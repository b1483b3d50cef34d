/**
 * @module flows
 * The sign-in flows a config declares (`providers.<p>.oauth`), built with
 * the credentials package's presets and its generic RFC 8628 flow. The
 * gateway registers them with its credential manager, and `switchyard
 * login` uses the very same list, so the terminal and the browser sign in
 * the same way. The two presets stay available under their own names with
 * their default endpoints unless a provider claims the name.
 */
import {
  type AuthFlow,
  CloudSignInOptionsSchema,
  cloudCodingAssistantFlow,
  codeAssistantFlow,
  deviceCodeFlow,
} from '@switchyard/credentials';
import { type FieldIssue, fieldIssues } from '@switchyard/http-kit';
import { z } from 'zod';
import { type GatewayConfig, oauthFlowName, type ProviderOAuth } from './config/schema.js';

/** Keeps the optional settings a preset takes, leaving out the unset ones (the preset's defaults then apply). */
function defined<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

function flowOf(provider: string, oauth: ProviderOAuth): AuthFlow {
  const name = oauthFlowName(provider, oauth);
  switch (oauth.preset) {
    case 'code-assistant':
      return codeAssistantFlow({
        name,
        provider,
        ...defined({
          clientId: oauth.client_id,
          scope: oauth.scope,
          deviceCodeUrl: oauth.device_authorization_url,
          accessTokenUrl: oauth.token_url,
          apiTokenUrl: oauth.api_token_url,
          userUrl: oauth.user_url,
        }),
      });
    case 'cloud-coding-assistant': {
      const template = oauth.oidc_url;
      return cloudCodingAssistantFlow({
        name,
        provider,
        // The preset checks the region against the shape of a region name before it is put in the URL.
        ...(template ? { oidcUrl: (region: string) => template.replaceAll('{region}', region) } : {}),
        ...defined({ builderIdStartUrl: oauth.builder_id_start_url, builderIdRegion: oauth.builder_id_region }),
      });
    }
    case 'device-code':
      // The schema requires these three for a device-code flow.
      return deviceCodeFlow({
        name,
        provider,
        deviceAuthorizationUrl: oauth.device_authorization_url!,
        tokenUrl: oauth.token_url!,
        clientId: oauth.client_id!,
        ...defined({ clientSecret: oauth.client_secret, scope: oauth.scope }),
      });
  }
}

/**
 * The flows of `providers.<p>.oauth`, one per provider that declares one.
 *
 * @example
 * ```ts
 * const opened = await openCredentials({ authDir, flows: configuredFlows(config) });
 * await opened.manager.signIns.start('acme');
 * ```
 */
export function configuredFlows(config: GatewayConfig): AuthFlow[] {
  return Object.entries(config.providers).flatMap(([provider, block]) => (block.oauth ? [flowOf(provider, block.oauth)] : []));
}

/** Which kind each sign-in flow of a config is: the declared ones, and the two presets under their own names unless claimed. */
export function flowKinds(config: GatewayConfig): Map<string, ProviderOAuth['preset']> {
  const kinds = new Map<string, ProviderOAuth['preset']>([
    ['code-assistant', 'code-assistant'],
    ['cloud-coding-assistant', 'cloud-coding-assistant'],
  ]);
  for (const [provider, block] of Object.entries(config.providers)) {
    if (block.oauth) kinds.set(oauthFlowName(provider, block.oauth), block.oauth.preset);
  }
  return kinds;
}

const priority = z.number().int().optional();
// The identity-center fields as the preset itself checks them, so the API and the flow cannot disagree.
const identityCenter = CloudSignInOptionsSchema.options[1].shape;

/** Sign-in options of a cloud coding-assistant flow: which kind of account. */
export const CloudSignInRequestSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('builder-id'), priority }),
  z.strictObject({ mode: z.literal('identity-center'), start_url: identityCenter.start_url, region: identityCenter.region, priority }),
]);

/** Sign-in options of every other flow: only the new credential's priority. */
export const PlainSignInRequestSchema = z.strictObject({ priority });

/** What a sign-in request is turned into: the flow's own options and the credential's extras. */
export type SignInRequest = { options: Record<string, unknown>; priority?: number };

/**
 * Validates the options of a sign-in (the JSON body of
 * `POST /v0/oauth/{flow}/sessions`, or `switchyard login`'s flags) for a
 * flow of `kind`, and translates them into the flow's own options.
 */
export function signInRequest(kind: ProviderOAuth['preset'], input: unknown): { request: SignInRequest } | { issues: FieldIssue[] } {
  if (kind === 'cloud-coding-assistant') {
    const parsed = CloudSignInRequestSchema.safeParse(input);
    if (!parsed.success) return { issues: fieldIssues(parsed.error.issues) };
    const { priority: p, ...choice } = parsed.data;
    const options =
      choice.mode === 'builder-id'
        ? { account: 'builder_id' }
        : { account: 'identity_center', start_url: choice.start_url, region: choice.region };
    return { request: { options, ...(p === undefined ? {} : { priority: p }) } };
  }
  const parsed = PlainSignInRequestSchema.safeParse(input);
  if (!parsed.success) return { issues: fieldIssues(parsed.error.issues) };
  return { request: { options: {}, ...(parsed.data.priority === undefined ? {} : { priority: parsed.data.priority }) } };
}
