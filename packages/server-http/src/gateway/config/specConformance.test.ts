/**
 * Every key of the specification's configuration table loads. The table is
 * read from a checked-in copy (fixtures/specConfigKeys.md), and what each key
 * is set to comes from that table: its shown values, its listed choices, or a
 * value of its stated type. The test then reads each key back from the parsed
 * config, so a key accepted but dropped (or put elsewhere) fails too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse as parseYaml, stringify } from 'yaml';
import { parseConfig } from './load.js';

interface Row {
  keys: string[];
  types: string[];
  values: string;
}

const fixture = readFileSync(new URL('./fixtures/specConfigKeys.md', import.meta.url), 'utf8');

/** The table's rows: key paths expanded (`a.b.c / d` is `a.b.c` and `a.b.d`), types per key where the table gives them. */
function rows(): Row[] {
  const lines = fixture.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Key path') && !line.startsWith('|---'));
  return lines.map((line) => {
    const [keyCell = '', typeCell = '', values = ''] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const parts = keyCell.split(' / ');
    const keys: string[] = [parts[0]!];
    const root = parts[0]!.split('.')[0]!;
    for (const part of parts.slice(1)) {
      // A part that starts at the root is a full path; otherwise it is a sibling of the part before.
      if (part.startsWith(`${root}.`)) keys.push(part);
      else keys.push([...keys.at(-1)!.split('.').slice(0, -1), part].join('.'));
    }
    const types = typeCell.split(' / ').flatMap((type) => {
      const repeated = /^(\w+) x(\d+)$/.exec(type);
      return repeated ? Array<string>(Number(repeated[2])).fill(repeated[1]!) : [type];
    });
    return { keys, types, values };
  });
}

/** The values a row shows (`Shown: true / 5m / 10m`, `100 / 10 / 90s`), aligned to its last keys. */
function shownValues(row: Row): (string | undefined)[] {
  const text = row.values.replace(/^Shown: /, '').replace(/\.$/, '');
  const looksListed = /^[\w.`/ -]+$/.test(text) && text.includes(' / ');
  if (!looksListed) return row.keys.map(() => undefined);
  const shown = text.split(' / ').map((v) => v.replace(/`/g, '').replace(/ entries$/, ''));
  // A row may leave out its first keys (an `enabled` flag): the values belong to the last ones.
  const offset = row.keys.length - shown.length;
  return row.keys.map((_, i) => (i >= offset ? shown[i - offset] : undefined));
}

/** The choices a row lists in backticks (`round_robin`, `quota_aware`, …), placeholders (`<exporter_a>`) left out. */
function choices(row: Row): string[] {
  return [...row.values.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((v) => !v.startsWith('<'));
}

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A YAML scalar as written in the table: `true`, `30s`, `9090`, `0.1`, `/metrics`. */
function scalar(text: string): unknown {
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/** A value of `type` for `key`, where the table shows none. */
function sample(type: string, key: string): unknown {
  switch (type) {
    case 'boolean':
      return true;
    case 'duration':
      return '45s';
    case 'integer':
      return 7;
    case 'number':
      return 0.25;
    case 'URL':
      return key.includes('health_check') ? 'https://status.example.com/health' : 'https://collector.example.com/v1/traces';
    default:
      return undefined;
  }
}

/** Sets a dotted path (`<p>` and `<provider>` are the provider `p`) in a plain object. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.replace(/<p>|<provider>/g, 'p').split('.');
  let node = target;
  for (const segment of segments.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, unknown>;
  node[segments.at(-1)!] = value;
}

function getPath(source: unknown, path: string): unknown {
  let node = source;
  for (const segment of path.replace(/<p>|<provider>/g, 'p').split('.')) node = (node as Record<string, unknown> | undefined)?.[segment];
  return node;
}

/** What a written value reads back as: durations in milliseconds, sizes in bytes, anything else as written. */
function readsAs(written: unknown, read: unknown): boolean {
  if (JSON.stringify(written) === JSON.stringify(read)) return true;
  if (Array.isArray(written))
    return Array.isArray(read) && read.length === written.length && written.every((item, i) => readsAs(item, read[i]));
  if (typeof written === 'object' && written !== null)
    return (
      typeof read === 'object' &&
      read !== null &&
      Object.entries(written).every(([k, v]) => readsAs(v, (read as Record<string, unknown>)[k]))
    );
  if (typeof written !== 'string') return false;
  const duration = DURATION.exec(written);
  if (duration) return read === Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const size = /^(\d+)([KMG])$/.exec(written);
  if (size) return read === Number(size[1]) * 1024 ** ' KMG'.indexOf(size[2]!);
  return false;
}

// The one thing the table cannot say: a provider needs a kind to exist at all.
const BASE = { providers: { p: { kind: 'mock', models: ['m'] } } };

/** Loads a config holding `values`, and checks each key reads back as written. */
function loads(values: Record<string, unknown>, what: string): void {
  const doc = structuredClone(BASE) as Record<string, unknown>;
  for (const [key, value] of Object.entries(values)) setPath(doc, key, value);
  let config: unknown;
  try {
    config = parseConfig(stringify(doc));
  } catch (error) {
    assert.fail(`${what} does not load: ${(error as Error).message}\n${stringify(doc)}`);
  }
  for (const [key, value] of Object.entries(values)) {
    const read = getPath(config, key);
    assert.ok(readsAs(value, read), `${key}: wrote ${JSON.stringify(value)}, read ${JSON.stringify(read)}`);
  }
}

const table = rows();

describe('the specification’s configuration table loads', () => {
  test('the fixture holds the whole table', () => {
    assert.equal(table.length, 25);
    assert.ok(table.flatMap((row) => row.keys).includes('server.failover.enabled'));
  });

  for (const row of table) {
    test(row.keys.join(' / '), () => {
      const shown = shownValues(row);
      const listed = choices(row);
      const values: Record<string, unknown> = {};
      row.keys.forEach((key, i) => {
        const type = row.types.length === row.keys.length ? row.types[i]! : row.types.length === 1 ? row.types[0]! : '';
        const value = shown[i] !== undefined ? scalar(shown[i]!) : sample(type, key);
        if (value !== undefined) values[key] = value;
      });
      const last = (key: string) => key.split('.').at(-1)!;
      const single = row.keys.length === 1 ? row.keys[0]! : undefined;

      const list = row.keys.find((key) => key.endsWith('[]'));
      if (list) {
        // alerts.rules[]: a rule with the fields the table names, to a channel the notifications row names.
        const fields = /Rule: (.+?)\(/
          .exec(row.values)![1]!
          .match(/`(\w+)`/g)!
          .map((f) => f.slice(1, -1));
        assert.deepEqual(fields, ['name', 'condition', 'duration', 'severity', 'notifications']);
        const rule = {
          name: 'high_error_rate',
          condition: 'error_rate > 0.05',
          duration: '5m',
          severity: 'warning',
          notifications: ['chat'],
        };
        loads({ [row.keys[0]!]: true, [list.slice(0, -2)]: [rule] }, list);
        return;
      }
      if (single?.endsWith('.*')) {
        // notifications.<channel>.*: each channel the table describes, with each of its fields.
        for (const [, name, fieldList] of row.values.matchAll(/(\w+): ([^.]+)\./g)) {
          const channel = name!.toLowerCase();
          const block: Record<string, unknown> = {};
          for (const field of fieldList!.split(', ')) {
            const [fieldName = '', note] = field.split(' ');
            block[fieldName] =
              fieldName === 'enabled'
                ? true
                : note === '(list)'
                  ? ['ops@example.com']
                  : /url/.test(fieldName)
                    ? 'https://hooks.example.com/x'
                    : fieldName === 'smtp_server'
                      ? 'smtp.example.com:587'
                      : fieldName === 'from'
                        ? 'gateway@example.com'
                        : `${fieldName}-value`;
          }
          const prefix = single.replace('<channel>.*', `${channel}.`);
          loads(Object.fromEntries(Object.entries(block).map(([field, value]) => [`${prefix}${field}`, value])), `${single} (${channel})`);
        }
        return;
      }
      if (row.keys[0] === 'server.failover.enabled') {
        // mode `active_passive` (with backup_url, failover_timeout) or `active_active` (load_balancing, peers).
        const common = { 'server.failover.health_check_interval': '10s' };
        loads(
          {
            ...common,
            'server.failover.enabled': true,
            'server.failover.mode': listed[0],
            'server.failover.backup_url': 'https://backup.example.com',
            'server.failover.failover_timeout': '30s',
          },
          'failover, active_passive',
        );
        loads(
          {
            ...common,
            'server.failover.enabled': true,
            'server.failover.mode': listed[1],
            'server.failover.load_balancing': listed[2],
            'server.failover.peers': ['https://peer-1.example.com', 'https://peer-2.example.com'],
          },
          'failover, active_active',
        );
        loads({ 'server.failover.enabled': false }, 'failover off');
        return;
      }
      if (row.keys[0] === 'auth.encryption.enabled') values['auth.encryption.key'] = 'k'.repeat(32); // 32 bytes
      if (row.keys[0]?.startsWith('logging.')) {
        // level: each listed; format `json`; output: where the lines go; rotation shown as 100M / 30d / 10.
        const [levels, format] = [listed.slice(0, 4), listed[4]];
        const [size, age, backups] = /rotation shown: (\S+) \/ (\S+) \/ (\d+)/.exec(row.values)!.slice(1);
        for (const level of levels)
          loads(
            {
              'logging.level': level,
              'logging.format': format,
              'logging.rotation.enabled': true,
              'logging.rotation.max_size': size,
              'logging.rotation.max_age': age,
              'logging.rotation.max_backups': Number(backups),
            },
            `logging at ${level}`,
          );
        loads({ 'logging.output': 'stdout' }, 'logging.output');
        return;
      }
      if (row.keys[0] === 'tracing.enabled') {
        values['tracing.exporter'] = listed.find((choice) => !choice.includes('<'));
        values['tracing.service_name'] = 'switchyard';
      }
      // "method" of an HTTP health check: an HTTP method.
      if (row.keys.includes('providers.<p>.health_check.method')) values['providers.<p>.health_check.method'] = 'HEAD';
      if (row.keys[0] === 'providers.<p>.quota.limit') values['providers.<p>.quota.reset'] = 'monthly';
      if (row.keys[0] === 'auth.quota.reset_schedule.<provider>') {
        for (const schedule of listed) loads({ [row.keys[0]]: schedule }, `${row.keys[0]}: ${schedule}`);
        return;
      }
      for (const key of row.keys) {
        if (values[key] === undefined && last(key) !== 'key') values[key] = listed[0] ?? `${last(key)}-value`;
      }
      loads(values, row.keys.join(' / '));
      // Every listed choice of a one-key row (a strategy, say) loads too.
      if (single && listed.length > 1) for (const choice of listed) loads({ [single]: choice }, `${single}: ${choice}`);
    });
  }

  test('the defaults the table states are the defaults', () => {
    const config = parseConfig(stringify(BASE));
    for (const row of table) {
      const defaulted = /`(\w+)` \(default\)/.exec(row.values);
      if (defaulted) assert.equal(getPath(config, row.keys[0]!), defaulted[1], row.keys[0]);
    }
    // "Outbound HTTP client: max idle connections 100, per host 10, idle timeout 90 seconds"; cache 1000 entries, 5 minutes.
    const pool = table.find((row) => row.keys[0]!.includes('connection_pool'))!;
    for (const [i, shown] of shownValues(pool).entries()) assert.ok(readsAs(scalar(shown!), getPath(config, pool.keys[i]!)), pool.keys[i]);
    const cache = table.find((row) => row.keys[0]!.includes('.cache.'))!;
    for (const [i, shown] of shownValues(cache).entries())
      if (shown !== undefined) assert.ok(readsAs(scalar(shown), getPath(config, cache.keys[i]!)), cache.keys[i]);
    assert.ok(parseYaml(stringify(BASE)));
  });
});
