// A stand-in interactive coding agent for `yard implement --agent-type`: a line-based terminal
// program (run on a pseudo-terminal by the agent session server). It shows a `› ` prompt; each
// prompt it gets (typed or bracketed-pasted, then Enter) makes it write agent-work.txt in the
// directory it runs in, commit it, and report a pull request, then show the prompt again.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const out = process.stdout;
let line = '';
let pasting = false;
let turns = 0;
process.stdin.setRawMode?.(true);
process.stdin.setEncoding('utf8');
// Bracketed paste on, as agents turn it on: a multi-line prompt arrives as one paste.
out.write('\x1b[?2004hfake agent ready\r\n› ');

function submit(prompt) {
  turns++;
  out.write('\r\nworking…\r\n');
  setTimeout(() => {
    writeFileSync('agent-work.txt', `turn ${turns} in ${process.cwd()}\n${prompt.slice(0, 200)}\n`);
    execFileSync('git', ['add', 'agent-work.txt']);
    execFileSync('git', [
      '-c',
      'user.name=Agent',
      '-c',
      'user.email=agent@example.invalid',
      'commit',
      '--quiet',
      '-m',
      `agent turn ${turns}`,
    ]);
    out.write(`done: committed agent-work.txt\r\nPR_URL=https://example.invalid/pr/${turns}\r\n› `);
  }, 300);
}

process.stdin.on('data', (data) => {
  let text = data;
  while (text.length > 0) {
    if (text.startsWith('\x1b[200~')) {
      pasting = true;
      text = text.slice(6);
    } else if (text.startsWith('\x1b[201~')) {
      pasting = false;
      text = text.slice(6);
    } else if (text[0] === '\x04') {
      process.exit(0);
    } else if (text[0] === '\r' && !pasting) {
      const prompt = line;
      line = '';
      text = text.slice(1);
      if (prompt.trim()) submit(prompt);
      else out.write('\r\n› ');
    } else {
      const char = text[0] === '\r' ? '\n' : text[0];
      line += char;
      if (!pasting) out.write(char);
      text = text.slice(1);
    }
  }
});
