/**
 * @module logTail
 * Keeps the last lines the logger wrote, for `GET /v0/management/logs`,
 * and tells followers about new ones (`?follow=true`, as SSE), while
 * every line still goes to the configured destination.
 */
import type { DestinationStream } from '@switchyard/observability/logging';
import { LineRing } from './lineRing.js';

/** Lines a log follower may have waiting; past it the oldest are dropped, and the follower told how many. */
export const LOG_FOLLOW_QUEUE = 1_000;

/** A log destination that also remembers recent lines. */
export class LogTail implements DestinationStream {
  private readonly inner: DestinationStream | undefined;
  private readonly ring: LineRing;
  private partial = '';
  private readonly followers = new Set<(line: string) => void>();

  constructor(inner: DestinationStream | undefined, capacity = 5_000) {
    this.inner = inner;
    // Lines as bytes (lineRing.ts says why), up to 512 bytes a line on average.
    this.ring = new LineRing(capacity);
  }

  write(chunk: string): void {
    this.inner?.write(chunk);
    // The logger hands over one whole line per write: keep it without the concatenation and split below.
    const end = chunk.length - 1;
    if (this.partial.length === 0 && end > 0 && chunk.indexOf('\n') === end) {
      this.keep(chunk.slice(0, end));
      return;
    }
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) if (line.length > 0) this.keep(line);
  }

  private keep(line: string): void {
    this.ring.push(line);
    for (const follower of this.followers) follower(line);
  }

  /** The last `n` complete lines, oldest first. */
  last(n: number): string[] {
    return this.ring.last(n);
  }

  /** Calls `listener` with every new line until the returned function is called. */
  follow(listener: (line: string) => void): () => void {
    this.followers.add(listener);
    return () => this.followers.delete(listener);
  }

  /** Followers currently attached. */
  get followerCount(): number {
    return this.followers.size;
  }
}
