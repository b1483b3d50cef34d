import { runAuditStoreContract } from '../contract.js';
import { MemoryAuditStore } from './auditStore.js';

runAuditStoreContract('MemoryAuditStore', async () => ({ store: new MemoryAuditStore() }));
