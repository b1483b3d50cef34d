import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { stagedLookup } from '@switchyard/test-support';
import { SsrfBlocked } from '../controlPlane/ssrf.js';
import { parseConfig } from './config/load.js';
import type { OutboundUrl } from './config/outboundUrls.js';
import { GuardedHosts } from './guardedHosts.js';

// Every name resolves to loopback: what a rebound name does.
const dns = stagedLookup((hostname) => (hostname.startsWith('public.') ? '93.184.216.34' : '127.0.0.1'));

const destination = (url: string): OutboundUrl => ({ path: 'providers.acme.base_url', value: url, url, protocols: ['http:', 'https:'] });

/** Runs `lookup` for `hostname` the way net.connect does, and returns its address or error. */
function resolveThrough(guarded: GuardedHosts, hostname: string): Promise<string | Error> {
  return new Promise((resolve) => {
    guarded.lookup(hostname, { all: false }, (error, address) => resolve(error ?? (address as string)));
  });
}

describe('GuardedHosts', () => {
  test('admits names, not IP literals (they were checked and cannot rebind), compared without case or trailing dot', () => {
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup });
    guarded.admit([
      destination('https://Models.Example.test./v1'),
      destination('http://93.184.216.35:8080/'),
      destination('http://[2001:4860::8888]/'),
    ]);
    assert.deepEqual(guarded.list(), ['models.example.test']);
    assert.ok(guarded.has('MODELS.example.test'));
    assert.ok(!guarded.has('93.184.216.35'));
  });

  test('the lookup refuses a guarded name that resolves to loopback and passes every other name through', async () => {
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup });
    guarded.admit([destination('http://rebound.test/'), destination('http://public.test/')]);
    const refused = await resolveThrough(guarded, 'rebound.test');
    assert.ok(refused instanceof SsrfBlocked, String(refused));
    assert.equal(refused.range, 'loopback');
    assert.equal(await resolveThrough(guarded, 'public.test'), '93.184.216.34');
    assert.equal(await resolveThrough(guarded, 'operator-model.test'), '127.0.0.1', 'a host the API never admitted is not guarded');
  });

  test('the allow-list in force at connect time is honoured, a reload that changes it included', async () => {
    let allow: readonly string[] = [];
    const guarded = new GuardedHosts({ policy: () => ({ allow }), resolve: dns.lookup });
    guarded.admit([destination('http://rebound.test/')]);
    assert.ok((await resolveThrough(guarded, 'rebound.test')) instanceof SsrfBlocked);
    allow = ['rebound.test'];
    assert.equal(await resolveThrough(guarded, 'rebound.test'), '127.0.0.1');
    allow = ['127.0.0.1'];
    assert.equal(await resolveThrough(guarded, 'rebound.test'), '127.0.0.1', 'an allowed address counts too');
    allow = [];
    assert.ok((await resolveThrough(guarded, 'rebound.test')) instanceof SsrfBlocked);
  });

  test('retain keeps the hosts the config still names, anywhere, and forgets the rest', () => {
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup });
    guarded.admit([destination('http://kept.test/v1'), destination('http://moved.test/'), destination('http://gone.test/')]);
    const config = parseConfig(`
providers:
  acme:
    kind: openai-compatible
    base_url: http://kept.test/v1
    models: [m]
server:
  failover:
    mode: active_active
    self_url: http://self.test:8317
    peers: ['http://moved.test:8317']
`);
    guarded.retain(config);
    assert.deepEqual(guarded.list(), ['kept.test', 'moved.test']);
  });

  test('an oidc_url template guards the host of every region a sign-in may name, not only the one checked', async () => {
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup });
    const template = 'https://OIDC.{region}.rebound.test';
    guarded.admit([
      { path: 'providers.acme.oauth.oidc_url', value: template, url: template.replace('{region}', 'us-east-1'), protocols: ['https:'] },
    ]);
    assert.deepEqual(guarded.list(), ['oidc.{region}.rebound.test']);
    assert.ok(guarded.has('oidc.us-east-1.rebound.test'));
    const otherRegion = await resolveThrough(guarded, 'oidc.eu-central-1.rebound.test');
    assert.ok(otherRegion instanceof SsrfBlocked, String(otherRegion));
    assert.ok(!guarded.has('oidc.rebound.test'), 'the slot stands for a region name, not for anything');
    assert.ok(!guarded.has('oidc.x.example.rebound.test'));
    guarded.retain(
      parseConfig(`
providers:
  acme:
    kind: mock
    models: [m]
    oauth: { preset: cloud-coding-assistant, oidc_url: '${template}' }
`),
    );
    assert.deepEqual(guarded.list(), ['oidc.{region}.rebound.test'], 'kept while the config names the template');
  });
});
