/**
 * @module duplicateKeys
 * `JSON.parse` keeps the last of two equal keys without a word. The verifier
 * already rejects such a line (its canonical form differs), and this scanner
 * only runs after that, to name the key in the error message.
 */

interface Level {
  /** Keys seen so far; `undefined` for an array. */
  keys: Set<string> | undefined;
  /** Whether the next string token is a key. */
  expectingKey: boolean;
}

/**
 * Returns the first key that appears twice in one object of `text`, or
 * `undefined`. Assumes `text` is otherwise valid JSON.
 *
 * @example
 * ```ts
 * findDuplicateKey('{"a":1,"b":{"a":2},"a":3}'); // 'a'
 * ```
 */
export function findDuplicateKey(text: string): string | undefined {
  const stack: Level[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const top = stack[stack.length - 1];
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectingKey = false;
      }
      i = j + 1;
      continue;
    }
    if (ch === '{') stack.push({ keys: new Set(), expectingKey: true });
    else if (ch === '[') stack.push({ keys: undefined, expectingKey: false });
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === ',' && top?.keys) top.expectingKey = true;
    i++;
  }
  return undefined;
}
