// The real OpenCode CLI (pinned in test-support) in a PTY behind the agent session server, its model
// scripted behind the gateway, all on loopback: see realAgentSuite.ts for what is checked.
import { realAgentSuite } from './realAgentSuite.js';

realAgentSuite('opencode', 'OpenCode', 5000);
