import { credentials, Metadata } from '@grpc/grpc-js';
import { loadWorkflowProto, startGrpcServer } from '@switchyard/server-grpc';
import { MemoryWorkflowStore, Workflow } from '@switchyard/workflow';

const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' });
await workflow.createFeature({ slug: '001-login', title: 'Log in with passkeys', actor: 'alice' });
const server = await startGrpcServer({ workflow, port: 0 });

const { proto } = loadWorkflowProto();
const core = new proto.switchyard.workflow.v1.CoreService(server.address, credentials.createInsecure());
core.GetFeatureState({ slug: '001-login' }, (error, state) => {
  console.log(error ? error.message : `${state?.state} -> ${state?.next_state} (yard ${state?.next_command})`);
  const entries: string[] = [];
  core
    .GetAuditTrail({ slug: '001-login' }, new Metadata())
    .on('data', (entry) => entries.push(entry.transition))
    .on('end', async () => {
      console.log(entries.join(', '));
      core.close();
      await server.close();
    });
});
