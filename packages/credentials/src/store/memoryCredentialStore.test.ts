import { runCredentialStoreContract, runQuotaStoreContract } from '../contract.js';
import { MemoryCredentialStore } from './memoryCredentialStore.js';
import { MemoryQuotaStore } from './quotaStore.js';

runCredentialStoreContract('MemoryCredentialStore', async () => ({ store: new MemoryCredentialStore() }));
runQuotaStoreContract('MemoryQuotaStore', async () => ({ store: new MemoryQuotaStore() }));
