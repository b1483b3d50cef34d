import { AuditLog, JsonlAuditStore, verifyFile } from '@switchyard/audit-chain';

const file = process.argv[2] ?? 'audit.jsonl';
const store = await JsonlAuditStore.open(file);
const log = new AuditLog(store, { origin: 'example.com/deploys' });
await log.append({ actor: 'alice', action: 'deploy', service: 'api', version: '1.4.0' });
await log.append({ actor: 'bob', action: 'rollback', service: 'api', version: '1.3.9' });
await store.close();

const result = await verifyFile(file, { origin: 'example.com/deploys' });
console.log(result.valid, result.entries_verified, result.root);
