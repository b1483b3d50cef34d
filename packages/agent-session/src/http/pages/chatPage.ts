/**
 * @module chatPage
 * `GET /chat`: a chat with the agent in plain HTML and JavaScript (no build
 * step). It reads `/events` with `fetch` (so it can send `Last-Event-ID`
 * and an API key), reconnects on its own with backoff, resumes where it
 * left off, and posts to `/message` and `/upload`. The message list is an
 * ARIA live log, the status and connection are announced, every control has
 * a label and works from the keyboard. While the agent shows a dialog (a
 * trust or permission prompt), the page shows its question with one button
 * per option; a button posts to `/dialog`. What an ACP agent does besides
 * talking (its tool calls with their status, its plan, its thoughts, how a
 * permission request was settled) appears in the log where it happened,
 * after the message it followed.
 */
import { BASE_CSS } from './html.js';

/** The page; `apiKeyRequired` makes it ask for a key (or take one from `#key=…`). */
export function chatPageHtml(options: { apiKeyRequired: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent chat · Switchyard</title>
<style>${BASE_CSS}
body { display: flex; flex-direction: column; height: 100vh; }
header { display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: center; padding: 0.75rem 1rem; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.1rem; margin: 0; }
.pill { display: inline-flex; align-items: center; gap: 0.4rem; padding: 0.1rem 0.6rem; border: 1px solid var(--line); border-radius: 999px; font-size: 0.875rem; }
.dot { width: 0.6rem; height: 0.6rem; border-radius: 50%; background: var(--muted); }
[data-status="stable"] .dot, [data-connection="connected"] .dot { background: #1a7f37; }
[data-status="running"] .dot { background: #bf8700; }
[data-status="exited"] .dot { background: #cf222e; }
[data-connection="reconnecting"] .dot { background: #cf222e; }
header nav { margin-left: auto; font-size: 0.875rem; }
main { flex: 1; overflow-y: auto; padding: 1rem; }
#log { list-style: none; margin: 0 auto; padding: 0; max-width: 60rem; display: flex; flex-direction: column; gap: 0.75rem; }
#log li { padding: 0.6rem 0.9rem; border: 1px solid var(--line); border-radius: 0.5rem; max-width: 90%; }
#log li.user { align-self: flex-end; background: var(--user); }
#log li.agent { align-self: flex-start; background: var(--agent); }
#log li.error { align-self: center; color: var(--warn); border-style: dashed; }
#log li.activity { align-self: flex-start; max-width: 90%; font-size: 0.9rem; border-style: dashed; }
#log li.notice { align-self: center; font-size: 0.875rem; color: var(--muted); border: none; padding: 0.1rem 0.5rem; }
#log li.notice.denied { color: var(--warn); }
.tool-title { font-weight: 600; }
.badge { display: inline-block; margin-left: 0.5rem; padding: 0 0.45rem; border-radius: 999px; border: 1px solid var(--line); font-size: 0.75rem; }
.badge[data-status="completed"] { border-color: #1a7f37; color: #1a7f37; }
.badge[data-status="failed"] { border-color: #cf222e; color: #cf222e; }
.badge[data-status="in_progress"], .badge[data-status="pending"] { border-color: #bf8700; color: #bf8700; }
#log .plan-entries { margin: 0.3rem 0 0; padding-left: 1.4rem; display: block; }
#log .plan-entries li { border: none; padding: 0; max-width: none; list-style: decimal; }
#log .plan-entries li[data-status="completed"] { text-decoration: line-through; color: var(--muted); }
.activity details { margin-top: 0.2rem; }
.activity pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.2rem 0 0; font-size: 0.8rem; }
.who { display: block; font-size: 0.75rem; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.2rem 0 0; }
form { border-top: 1px solid var(--line); padding: 0.75rem 1rem; }
.composer { display: flex; gap: 0.5rem; max-width: 60rem; margin: 0 auto; align-items: flex-end; }
textarea { flex: 1; min-height: 3rem; max-height: 12rem; resize: vertical; padding: 0.5rem; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 0.4rem; }
button, .upload { font: inherit; padding: 0.45rem 0.9rem; border-radius: 0.4rem; border: 1px solid var(--line); background: var(--agent); color: inherit; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--bg); font-weight: 600; }
button[aria-disabled="true"] { opacity: 0.6; cursor: not-allowed; }
.tools { display: flex; flex-wrap: wrap; gap: 0.5rem; max-width: 60rem; margin: 0.5rem auto 0; font-size: 0.875rem; align-items: center; }
.tools button, .tools .upload { padding: 0.2rem 0.6rem; }
#dialog { max-width: 60rem; margin: 0 auto 0.75rem; padding: 0.6rem 0.9rem; border: 2px solid var(--accent); border-radius: 0.5rem; }
#dialog[hidden] { display: none; }
#dialog-text { white-space: pre-wrap; margin: 0 0 0.5rem; }
#dialog-options { display: flex; flex-wrap: wrap; gap: 0.5rem; }
#notice { max-width: 60rem; margin: 0.4rem auto 0; color: var(--warn); min-height: 1.5em; font-size: 0.875rem; }
</style>
</head>
<body data-api-key="${options.apiKeyRequired ? 'required' : 'none'}">
<header>
  <h1>Agent chat</h1>
  <span class="pill" id="status" data-status="running" role="status" aria-live="polite"><span class="dot" aria-hidden="true"></span><span id="status-text">Agent: starting…</span></span>
  <span class="pill" id="connection" data-connection="connecting"><span class="dot" aria-hidden="true"></span><span id="connection-text">Connecting…</span></span>
  <nav><a href="docs">API reference</a></nav>
</header>
<main id="main" tabindex="-1">
  <ol id="log" role="log" aria-live="polite" aria-label="Conversation"></ol>
</main>
<form id="composer" aria-label="Send a message">
  <section id="dialog" role="group" aria-labelledby="dialog-text" hidden>
    <p id="dialog-text"></p>
    <div id="dialog-options"></div>
  </section>
  <div class="composer">
    <label for="content" class="visually-hidden">Message</label>
    <textarea id="content" name="content" placeholder="Message the agent (Enter sends, Shift+Enter adds a line)" autocomplete="off" required></textarea>
    <button type="submit" id="send" class="primary">Send</button>
  </div>
  <div class="tools" role="group" aria-label="Keys and files">
    <span>Keys:</span>
    <button type="button" data-key="\\u0003" aria-label="Send Control-C (interrupt)">Ctrl-C</button>
    <button type="button" data-key="\\u001b" aria-label="Send Escape">Esc</button>
    <button type="button" data-key="\\r" aria-label="Send Enter">Enter</button>
    <label class="upload">Upload a file<input type="file" id="file" class="visually-hidden"></label>
  </div>
  <p id="notice" role="alert"></p>
</form>
<script src="chat.js"></script>
</body>
</html>`;
}

/** The page's script (served as `/chat.js`, so the CSP can forbid inline scripts). */
export const CHAT_SCRIPT = String.raw`(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const log = $('log'), main = $('main'), input = $('content'), send = $('send'), notice = $('notice');
  const statusPill = $('status'), statusText = $('status-text'), connPill = $('connection'), connText = $('connection-text');
  const dialogBox = $('dialog'), dialogText = $('dialog-text'), dialogOptions = $('dialog-options');
  const items = new Map(), activities = new Map();
  let status = 'running', lastEventId = '', resumeFrom = '', firstFrame = true, retryMs = 1000, apiKey = sessionStorage.getItem('switchyard-agent-key') || '';

  const fromHash = new URLSearchParams(location.hash.slice(1)).get('key');
  if (fromHash) { apiKey = fromHash; sessionStorage.setItem('switchyard-agent-key', apiKey); history.replaceState(null, '', location.pathname); }
  // A key the server refuses is forgotten and asked for again: kept in session storage, a mistyped
  // key would otherwise outlive reloads and leave the page retrying with it for good.
  function askForKey(question) {
    apiKey = window.prompt(question) || '';
    if (apiKey) sessionStorage.setItem('switchyard-agent-key', apiKey);
    else sessionStorage.removeItem('switchyard-agent-key');
    return apiKey !== '';
  }
  if (document.body.dataset.apiKey === 'required' && !apiKey) askForKey('This agent server needs an API key');
  const headers = (extra) => Object.assign({}, extra, apiKey ? { authorization: 'Bearer ' + apiKey } : {});

  function say(text) { notice.textContent = text; }
  function nearBottom() { return main.scrollHeight - main.scrollTop - main.clientHeight < 80; }

  function showMessage(message) {
    const follow = nearBottom();
    let item = items.get(message.id);
    if (!item) {
      item = document.createElement('li');
      item.className = message.role;
      item.dataset.id = String(message.id);
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = message.role === 'user' ? 'You' : 'Agent';
      const content = document.createElement('div');
      content.className = 'content';
      item.append(who, content);
      const next = [...items.keys()].filter((id) => id > message.id).sort((a, b) => a - b)[0];
      log.insertBefore(item, next === undefined ? null : items.get(next));
      items.set(message.id, item);
    }
    item.querySelector('.content').textContent = message.content;
    if (follow) main.scrollTop = main.scrollHeight;
  }

  // An activity sits after the message it followed: before the first message with a larger id.
  function place(item, afterMessage) {
    const next = [...items.keys()].filter((id) => id > afterMessage).sort((a, b) => a - b)[0];
    log.insertBefore(item, next === undefined ? null : items.get(next));
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const STATUS_WORDS = { pending: 'waiting', in_progress: 'running', completed: 'done', failed: 'failed' };

  // Tool calls, plans and thoughts: one item each, redrawn as the agent updates it.
  function showActivity(type, activity) {
    const follow = nearBottom();
    const key = type + ':' + activity.id;
    let item = activities.get(key);
    if (!item) {
      item = element('li', 'activity ' + type);
      item.dataset.activity = activity.id;
      activities.set(key, item);
      place(item, activity.after_message);
    }
    const parts = [];
    if (type === 'tool_call') {
      item.dataset.status = activity.status;
      const head = element('div');
      head.append(element('span', 'who', 'Tool · ' + activity.kind), element('span', 'tool-title', activity.title));
      const badge = element('span', 'badge', STATUS_WORDS[activity.status] || activity.status);
      badge.dataset.status = activity.status;
      head.append(badge);
      parts.push(head);
      if (activity.content) {
        const details = element('details');
        details.append(element('summary', '', 'Output'), element('pre', '', activity.content));
        parts.push(details);
      }
    } else if (type === 'plan') {
      parts.push(element('span', 'who', 'Plan'));
      const list = element('ol', 'plan-entries');
      for (const entry of activity.entries) {
        const line = element('li', '', entry.content);
        line.dataset.status = entry.status;
        list.append(line);
      }
      parts.push(list);
    } else {
      const details = element('details');
      details.append(element('summary', 'who', 'Thought'), element('pre', '', activity.text));
      parts.push(details);
    }
    item.replaceChildren(...parts);
    if (follow) main.scrollTop = main.scrollHeight;
  }

  const PERMISSION_WORDS = { answered: 'Answered', granted: 'Allowed by policy', denied: 'Denied by policy', timed_out: 'Not answered in time, denied', withdrawn: 'Withdrawn' };

  // How a permission request was settled (the request itself is the dialog above the composer).
  function showPermission(event) {
    if (!PERMISSION_WORDS[event.outcome]) return;
    const item = element('li', 'notice' + (event.outcome === 'denied' || event.outcome === 'timed_out' ? ' denied' : ''));
    item.textContent = PERMISSION_WORDS[event.outcome] + ': ' + event.title + (event.chosen ? ' (' + event.chosen + ')' : '');
    log.append(item);
  }

  function showError(text) {
    const item = document.createElement('li');
    item.className = 'error';
    item.textContent = text;
    log.append(item);
  }

  // An agent that has ended is stable but takes no more messages: say so rather than "ready".
  function setStatus(next, exited) {
    status = exited ? 'exited' : next;
    statusPill.dataset.status = status;
    statusText.textContent = exited
      ? 'Agent: exited (' + (exited.signal ? 'signal ' + exited.signal : 'code ' + exited.exit_code) + ')'
      : next === 'stable' ? 'Agent: ready' : 'Agent: working…';
    send.setAttribute('aria-disabled', status === 'stable' ? 'false' : 'true');
  }

  // The agent's question, one button per option; the composer waits until it is answered.
  function setDialog(dialog) {
    dialogBox.hidden = !dialog;
    dialogOptions.replaceChildren();
    if (!dialog) { dialogText.textContent = ''; return; }
    dialogText.textContent = dialog.text || 'The agent asks:';
    dialog.options.forEach((label, index) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = label;
      button.dataset.option = String(index + 1);
      button.addEventListener('click', () => answer(index + 1));
      dialogOptions.append(button);
    });
  }

  async function answer(option) {
    const response = await fetch('dialog', { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify({ option }) });
    if (response.ok) return say('');
    const body = await response.json().catch(() => ({}));
    say((body.error && body.error.message) || 'The server answered ' + response.status);
  }

  function setConnection(state, text) {
    connPill.dataset.connection = state;
    connText.textContent = text;
  }

  const epochOf = (id) => id.split('-')[0];

  function onFrame(frame) {
    let event = 'message', data = '', id = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
    }
    if (id) lastEventId = id;
    if (!data) return;
    // A stream that does not pick up where this page left off (the server restarted: a new session) is a
    // full replay: what the page shows is another conversation's, so start over.
    if (firstFrame) {
      firstFrame = false;
      if (!(resumeFrom && id && epochOf(id) === epochOf(resumeFrom))) { items.clear(); activities.clear(); log.replaceChildren(); }
    }
    const payload = JSON.parse(data);
    if (event === 'message_update') showMessage(payload);
    else if (event === 'status_change') { setStatus(payload.status, payload.exited); setDialog(payload.exited ? undefined : payload.dialog); }
    else if (event === 'agent_error') showError('Agent error: ' + payload.message);
    else if (event === 'tool_call' || event === 'plan' || event === 'agent_thought') showActivity(event === 'agent_thought' ? 'thought' : event, payload);
    else if (event === 'permission') showPermission(payload);
  }

  async function connect() {
    setConnection('connecting', lastEventId ? 'Reconnecting…' : 'Connecting…');
    resumeFrom = lastEventId;
    firstFrame = true;
    try {
      const response = await fetch('events', { cache: 'no-store', headers: headers(Object.assign({ accept: 'text/event-stream' }, lastEventId ? { 'last-event-id': lastEventId } : {})) });
      if (response.status === 401 && !askForKey('The server did not accept the API key; enter it again')) {
        return setConnection('reconnecting', 'No API key: reload the page to enter one');
      }
      if (!response.ok) throw new Error('the server answered ' + response.status);
      setConnection('connected', 'Live');
      retryMs = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n/g, '\n');
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          onFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (error) {
      console.warn('event stream:', error);
    }
    setConnection('reconnecting', 'Disconnected, retrying in ' + Math.round(retryMs / 1000) + ' s');
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 15000);
  }

  async function post(body) {
    const response = await fetch('message', { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body) });
    if (response.ok) return true;
    if (response.status === 401 && askForKey('The server did not accept the API key; enter it again')) return post(body);
    const answer = await response.json().catch(() => ({}));
    say((answer.error && answer.error.message) || 'The server answered ' + response.status);
    return false;
  }

  $('composer').addEventListener('submit', async (event) => {
    event.preventDefault();
    const content = input.value;
    if (!content.trim()) return say('Type a message first.');
    if (status === 'exited') return say('The agent has exited; it takes no more messages.');
    if (!dialogBox.hidden) return say('The agent asks a question first: pick one of its options above.');
    if (status !== 'stable') return say('The agent is still working; wait until it is ready, or press Ctrl-C to interrupt it.');
    say('');
    if (await post({ content, type: 'user' })) input.value = '';
    input.focus();
  });

  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $('composer').requestSubmit();
    }
  });

  for (const button of document.querySelectorAll('[data-key]')) {
    button.addEventListener('click', () => post({ content: JSON.parse('"' + button.dataset.key + '"'), type: 'raw' }));
  }

  $('file').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    const form = new FormData();
    form.append('file', file);
    const response = await fetch('upload', { method: 'POST', headers: headers({}), body: form });
    const answer = await response.json().catch(() => ({}));
    if (response.ok) { input.value += (input.value ? ' ' : '') + answer.path; say('Uploaded to ' + answer.path); input.focus(); }
    else say((answer.error && answer.error.message) || 'Upload failed (' + response.status + ')');
    event.target.value = '';
  });

  setStatus('running');
  connect();
})();
`;
