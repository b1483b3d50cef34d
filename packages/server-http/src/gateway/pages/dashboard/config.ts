/**
 * @module dashboard/config
 * The config editor: the config file as written, edited in the page,
 * checked by the gateway (a dry run of the replacement: schema, bind rule,
 * SSRF guard), shown as a line diff with the settings that would wait for a
 * restart, and only then applied by hot reload. The file holds secrets, so
 * it is fetched only when the operator opens the editor.
 */
import { html } from 'hono/html';

export const CONFIG_BODY = html`<section aria-labelledby="config-title" id="config-panel" class="wide">
<h2 id="config-title">Config</h2>
<p class="muted">The config file as written, secrets included. Changes are checked and shown as a diff before they are applied.</p>
<p><button type="button" id="config-load">Open the editor</button></p>
<div id="config-editor" hidden>
<label for="config-text">config.yaml</label>
<textarea id="config-text" rows="18" spellcheck="false" autocomplete="off"></textarea>
<p><button type="button" id="config-check">Check and show changes</button> <button type="button" id="config-apply" disabled>Apply</button> <button type="button" id="config-revert">Revert</button></p>
<p id="config-report" role="status" aria-live="polite"></p>
<div id="config-review" hidden>
<h3>Changes</h3>
<pre id="config-diff" class="diff" tabindex="0" aria-label="Changes to the config, line by line"></pre>
<p id="config-restart" class="warn"></p>
</div>
</div>
</section>`;

export const CONFIG_SCRIPT = `
const configEdit = { original: '', checked: null };
/** Lines of a and b with '  ', '- ' or '+ ' before each: a longest-common-subsequence diff, bounded in size. */
function lineDiff(a, b) {
  const x = a.split('\\n'), y = b.split('\\n');
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let endX = x.length, endY = y.length;
  while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) { endX--; endY--; }
  const midX = x.slice(start, endX), midY = y.slice(start, endY);
  const out = [];
  for (let i = Math.max(0, start - 3); i < start; i++) out.push('  ' + x[i]);
  if (midX.length * midY.length > 4_000_000) {
    for (const line of midX) out.push('- ' + line);
    for (const line of midY) out.push('+ ' + line);
  } else {
    const n = midX.length, m = midY.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = midX[i] === midY[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midX[i] === midY[j]) { out.push('  ' + midX[i]); i++; j++; }
      else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { out.push('+ ' + midY[j]); j++; }
      else { out.push('- ' + midX[i]); i++; }
    }
  }
  for (let i = endX; i < Math.min(x.length, endX + 3); i++) out.push('  ' + x[i]);
  return out;
}
function showDiff(lines) {
  const pre = $('config-diff');
  pre.replaceChildren(...lines.map((line) => el('span', { className: line[0] === '+' ? 'added' : line[0] === '-' ? 'removed' : 'same' }, line + '\\n')));
}
async function loadConfig() {
  try {
    configEdit.original = await api('/v0/management/config.yaml');
    $('config-text').value = configEdit.original;
    $('config-editor').hidden = false;
    $('config-review').hidden = true;
    $('config-apply').disabled = true;
    report('config-report', 'Loaded.', true);
  } catch (error) {
    $('config-editor').hidden = true;
    report('config-report', error.message, false);
    $('config-load').after($('config-report'));
  }
}
function configRequest(dryRun) {
  return api('/v0/management/config.yaml' + (dryRun ? '?dry_run=true' : ''), { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: $('config-text').value });
}
$('config-load').addEventListener('click', loadConfig);
$('config-revert').addEventListener('click', () => { $('config-text').value = configEdit.original; $('config-review').hidden = true; $('config-apply').disabled = true; report('config-report', 'Reverted to the file as written.', true); });
$('config-text').addEventListener('input', () => { $('config-apply').disabled = true; });
$('config-check').addEventListener('click', async () => {
  const edited = $('config-text').value;
  if (edited === configEdit.original) { report('config-report', 'No changes.', true); $('config-review').hidden = true; return; }
  try {
    const result = await configRequest(true);
    showDiff(lineDiff(configEdit.original, edited));
    $('config-restart').textContent = result.restart_needed.length ? 'Waits for a restart: ' + result.restart_needed.join(', ') : '';
    $('config-review').hidden = false;
    $('config-apply').disabled = false;
    configEdit.checked = edited;
    report('config-report', 'Valid. Review the changes, then apply.', true);
  } catch (error) {
    $('config-review').hidden = true;
    report('config-report', 'Not valid: ' + error.message, false);
  }
});
$('config-apply').addEventListener('click', async () => {
  if ($('config-text').value !== configEdit.checked) { report('config-report', 'The text changed since the check: check it again.', false); $('config-apply').disabled = true; return; }
  $('config-apply').disabled = true;
  try {
    const result = await configRequest(false);
    configEdit.original = $('config-text').value;
    $('config-review').hidden = true;
    report('config-report', 'Applied' + (result.persisted ? ' and saved' : '') + '.' + (result.restart_needed.length ? ' Waits for a restart: ' + result.restart_needed.join(', ') + '.' : ''), true);
    await refresh();
  } catch (error) { report('config-report', 'Not applied: ' + error.message, false); }
});
`;
