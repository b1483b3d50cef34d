/**
 * @module leavingSink
 * Test-only (not published, like everything in `testing`): a sink whose
 * client goes away mid-stream, as a chat UI's "stop" button does.
 */
import { MemorySink } from '../sink.js';

/**
 * A sink whose client goes away (its request's signal aborts, its connection closes) once the
 * first chunk reached it.
 *
 * @example
 * ```ts
 * const leave = new AbortController();
 * await relay.handle({ ...request, signal: leave.signal }, new LeavingSink(leave));
 * ```
 */
export class LeavingSink extends MemorySink {
  constructor(private readonly leave: AbortController) {
    super();
  }

  override write(chunk: Uint8Array | string): boolean {
    const written = super.write(chunk);
    this.closed = true;
    this.leave.abort();
    return written;
  }
}
