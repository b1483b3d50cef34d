/**
 * @module glob
 * Model-name globs (`gpt-4o*`, `claude-?-*`), shared by the translators'
 * per-model settings and the relay's model router.
 */

/** Compiles a glob (`*` any run, `?` one character) to an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
