import { verifyFile } from '@switchyard/audit-chain';

const result = await verifyFile(process.argv[2]!, { origin: process.argv[3] });
if (!result.valid) {
  console.error(`entry ${result.first_invalid_id}: ${result.error_code}: ${result.error_message}`);
  process.exit(1);
}
console.log(`${result.entries_verified} entries, root ${result.root}`);
