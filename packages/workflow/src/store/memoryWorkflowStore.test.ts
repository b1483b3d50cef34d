import { runWorkflowStoreContract } from '../contract.js';
import { MemoryWorkflowStore } from './memoryWorkflowStore.js';

runWorkflowStoreContract('memory', async () => ({ store: new MemoryWorkflowStore() }));
