/**
 * @module readBody
 * Reads a request body with a size limit, so a client cannot make the
 * gateway buffer without bound.
 */
import type { IncomingMessage } from 'node:http';

/** The body exceeded the limit. */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

/** Reads the whole body, refusing more than `limit` bytes (the declared length is checked first). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    throw new BodyTooLarge(`request body of ${declared} bytes exceeds the ${limit}-byte limit`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge(`request body exceeds the ${limit}-byte limit`);
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
