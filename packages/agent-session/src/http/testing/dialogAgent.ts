/**
 * @module testing/dialogAgent
 * A test program: a node script that opens with a trust menu (arrow keys
 * and Enter, like agents built on terminal UI toolkits; anything else typed
 * into it is swallowed, as a real menu does), then echoes what it is told
 * as `You said: …`; `run <command>` first asks `Allow command …? [y/n]:` (a
 * letter and Enter answer it; other keys are swallowed). Run it under the
 * PTY with `node -e DIALOG_AGENT`.
 */
export const DIALOG_AGENT = String.raw`
const out = (s) => process.stdout.write(s);
const options = ['Yes, proceed', 'Yes, and remember this folder', 'No, exit'];
let selected = 0, mode = 'dialog', line = '', remembered = false, command = '', answer = '';
function drawDialog() {
  out('\x1b[2J\x1b[H');
  out('Fake Agent 1.0\r\n\r\n');
  out('Do you trust the files in this folder?\r\n\r\n');
  options.forEach((o, i) => out((i === selected ? '\u276f ' : '  ') + (i + 1) + '. ' + o + '\r\n'));
  out('\r\nEnter to confirm \u00b7 Esc to exit');
}
function prompt() { out('\r\n> '); }
process.stdin.setRawMode(true);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (data) => {
  if (mode === 'dialog') {
    if (data === '\x1b[A') selected = Math.max(0, selected - 1);
    else if (data === '\x1b[B') selected = Math.min(options.length - 1, selected + 1);
    else if (data === '\r') {
      if (selected === 2) process.exit(3);
      remembered = selected === 1;
      mode = 'chat';
      out('\x1b[2J\x1b[H' + (remembered ? 'Trusted and remembered.' : 'Trusted.') + '\r\n\x1b[?2004h');
      prompt();
      return;
    } else return; // Anything else is swallowed, as a real menu does.
    drawDialog();
    return;
  }
  if (mode === 'permission') {
    if (data === 'y' || data === 'n') { answer = data; out(data); }
    else if (data === '\r' && answer) {
      out(answer === 'y' ? '\r\nRan ' + command + ': ok' : '\r\nDenied.');
      mode = 'chat'; answer = '';
      prompt();
    }
    return;
  }
  for (const ch of data.replace(/\x1b\[20[01]~/g, '')) {
    if (ch === '\r' && line.startsWith('run ')) {
      command = line.slice(4); line = ''; mode = 'permission';
      out('\r\n\r\nAllow command ' + command + '? [y/n]: ');
      return;
    }
    if (ch === '\r') { out('\r\nYou said: ' + line); line = ''; prompt(); }
    else { line += ch; out(ch); }
  }
});
drawDialog();
`;
