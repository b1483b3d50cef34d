// A stand-in coding agent: reads the prompt from stdin, writes code and its
// test in the worktree it runs in, commits, and reports a pull request.
// With AGENT_SLEEP_MS it first waits (to be cancelled).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

// With AGENT_PID_FILE the agent writes its pid there first (for tests that watch it stop).
if (process.env.AGENT_PID_FILE) writeFileSync(process.env.AGENT_PID_FILE, String(process.pid));

let prompt = '';
for await (const chunk of process.stdin) prompt += chunk;
const wait = Number(process.env.AGENT_SLEEP_MS ?? 0);
if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
const seq = process.env.SWITCHYARD_WP_SEQUENCE;
process.stdout.write(`agent: got ${prompt.length} bytes for wp ${seq}\n`);
mkdirSync('src', { recursive: true });
writeFileSync(`src/wp${seq}.ts`, `export const wp${seq} = ${JSON.stringify(prompt.slice(0, 20))};\n`);
writeFileSync(`src/wp${seq}.test.ts`, `import { wp${seq} } from './wp${seq}.js';\nconsole.log(wp${seq});\n`);
execFileSync('git', ['add', '-A']);
execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.invalid', 'commit', '--quiet', '-m', `wp${seq}: implement`]);
process.stdout.write(`PR_URL=https://example.invalid/pr/${seq}\n`);
