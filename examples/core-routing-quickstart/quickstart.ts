import { bindAvailability, CooldownManager, Selector } from '@switchyard/core-routing';

const upstreams: Record<string, string> = { primary: 'https://primary.example/v1', backup: 'https://backup.example/v1' };
const selector = new Selector([{ id: 'primary' }, { id: 'backup', priority: 1 }], { strategy: 'priority' });
const cooldowns = new CooldownManager({ detection: { errorThreshold: 2 }, defaultDurations: { rateLimitMs: 30_000 } });
bindAvailability(selector, { cooldowns }); // cooling providers leave the selector, and come back

async function complete(body: object): Promise<{ provider: string; response: Response }> {
  for (const tried = new Set<string>(); ; ) {
    const provider = selector.select({ exclude: tried }); // throws AllProvidersInCooldown when all are cooling
    tried.add(provider);
    const response = await fetch(`${upstreams[provider]}/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
    if (response.status !== 429 && response.status < 500) {
      cooldowns.recordSuccess(provider);
      return { provider, response };
    }
    const retryAfterMs = Number(response.headers.get('retry-after')) * 1000 || undefined;
    cooldowns.recordFailure(provider, { kind: response.status === 429 ? 'rate_limit' : 'error', status: response.status, retryAfterMs });
    await response.body?.cancel(); // free the connection, then try the next provider
  }
}
// ---- end of the README excerpt; the rest drives it for the example's test ----

if (process.argv[2]) Object.assign(upstreams, JSON.parse(process.argv[2]));
for (let i = 1; i <= 3; i++) {
  const { provider, response } = await complete({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  console.log(`request ${i} → ${provider} (${response.status})`);
}
const status = cooldowns.status();
console.log(`cooling: ${status.providers_in_cooldown.join(', ')} for ${status.cooldown_periods.primary?.remaining_seconds} s`);
