import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { WorkflowError } from '../errors.js';
import { parseGroupBy, parseOrderBy, parseWhere, runQuery } from './auditQuery.js';

const entries = [
  {
    id: 1,
    feature_slug: 'a',
    wp_sequence: null,
    timestamp: '2026-01-01T00:00:00.000Z',
    actor: 'alice',
    transition: 'NONE -> CREATED',
    evidence_refs: [],
    action: 'feature_created',
  },
  {
    id: 2,
    feature_slug: 'a',
    wp_sequence: 1,
    timestamp: '2026-01-02T00:00:00.000Z',
    actor: 'bob',
    transition: 'PLANNED -> DOING',
    evidence_refs: [4, 5],
    action: 'transition',
  },
  {
    id: 3,
    feature_slug: 'a',
    wp_sequence: 2,
    timestamp: '2026-01-03T00:00:00.000Z',
    actor: "o'brien",
    transition: 'DOING -> REVIEW',
    evidence_refs: [6],
    action: 'transition',
    forced: true,
  },
];
const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.id);

test('comparisons, boolean logic, IN, IS NULL, contains and membership', () => {
  assert.deepEqual(ids(runQuery(entries, { where: 'actor = bob' })), [2]);
  assert.deepEqual(ids(runQuery(entries, { where: 'wp_sequence >= 1 AND NOT actor = bob' })), [3]);
  assert.deepEqual(ids(runQuery(entries, { where: 'actor = alice OR (from = DOING AND to = REVIEW)' })), [1, 3]);
  assert.deepEqual(ids(runQuery(entries, { where: 'wp_sequence IS NULL' })), [1]);
  assert.deepEqual(ids(runQuery(entries, { where: 'wp_sequence is not null' })), [2, 3]);
  assert.deepEqual(ids(runQuery(entries, { where: 'transition ~ doing' })), [2, 3]);
  assert.deepEqual(ids(runQuery(entries, { where: 'evidence_refs = 5' })), [2]);
  assert.deepEqual(ids(runQuery(entries, { where: "actor = 'o\\'brien'" })), [3]);
  assert.deepEqual(ids(runQuery(entries, { where: 'timestamp < 2026-01-02T12:00:00Z' })), [1, 2]);
  assert.deepEqual(ids(runQuery(entries, { where: 'id IN (1, 3) and forced = false' })), [1]);
  assert.deepEqual(ids(runQuery(entries, { where: 'id != 2', orderBy: 'id desc' })), [3, 1]);
  assert.deepEqual(runQuery(entries, { groupBy: 'action, feature_slug' }), [
    { action: 'feature_created', feature_slug: 'a', count: 1 },
    { action: 'transition', feature_slug: 'a', count: 2 },
  ]);
});

test('parse errors name the option and the column', () => {
  const cases: [() => unknown, string, RegExp][] = [
    [() => parseWhere('actor = '), 'where', /expected a value, got end of input at column 9/],
    [() => parseWhere('colour = red'), 'where', /unknown field "colour".* at column 1/],
    [() => parseWhere('actor bob'), 'where', /expected an operator .* at column 7/],
    [() => parseWhere("actor = 'bob"), 'where', /unterminated string .* at column 9/],
    [() => parseWhere('(actor = bob'), 'where', /expected "\)" at column 13/],
    [() => parseWhere('actor = bob actor = eve'), 'where', /join conditions with AND or OR at column 13/],
    [() => parseWhere('id = abc'), 'where', /id compares with a number/],
    [() => parseWhere('   '), 'where', /empty/],
    [() => parseWhere('actor ! bob'), 'where', /expected "!=" after "!"/],
    [() => parseWhere('actor IS bob'), 'where', /expected NULL after IS/],
    [() => parseGroupBy('actor actor'), 'group-by', /expected "," between fields at column 7/],
    [() => parseOrderBy('id sideways', false), 'order-by', /expected ASC, DESC or "," after the field at column 4/],
    [() => parseOrderBy('count', false), 'order-by', /unknown field "count"/],
  ];
  for (const [fn, option, message] of cases) {
    assert.throws(fn, (e: unknown) => {
      assert.ok(e instanceof WorkflowError, String(e));
      assert.equal(e.code, 'query_parse_error');
      assert.equal(e.details?.option, option);
      assert.match(e.message, new RegExp(`^--${option}: `));
      assert.match(e.message, message);
      return true;
    });
  }
  assert.throws(
    () => runQuery(entries, { limit: 0 }),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'limit',
  );
});

test('the parser never throws anything but a query_parse_error', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (input) => {
      try {
        parseWhere(input);
      } catch (error) {
        return error instanceof WorkflowError && error.code === 'query_parse_error';
      }
      return true;
    }),
    { numRuns: 2000 },
  );
});

test('a query never returns an entry that fails its predicate, nor drops one that passes', () => {
  fc.assert(
    fc.property(fc.constantFrom('alice', 'bob', 'carol'), fc.integer({ min: 0, max: 3 }), (actor, minWp) => {
      const rows = runQuery(entries, { where: `actor = ${actor} OR wp_sequence >= ${minWp}` });
      const expected = entries.filter((e) => e.actor === actor || (e.wp_sequence !== null && e.wp_sequence >= minWp));
      assert.deepEqual(ids(rows), ids(expected));
    }),
  );
});
