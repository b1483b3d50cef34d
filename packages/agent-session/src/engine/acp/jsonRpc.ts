/**
 * @module jsonRpc
 * JSON-RPC 2.0 over newline-delimited JSON, the framing the Agent Client
 * Protocol uses on stdio. Both sides may send requests and notifications;
 * this peer answers incoming requests through a handler, matches responses
 * to its own requests, and fails every pending request when the stream ends.
 */
import type { Readable, Writable } from 'node:stream';

/** A JSON-RPC error answered by the other side. */
export class JsonRpcError extends Error {
  override name = 'JsonRpcError';

  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The connection ended (the agent closed its output or exited): pending requests fail with this. */
export class ConnectionClosed extends Error {
  override name = 'ConnectionClosed';
}

/** What the peer does with messages from the other side. */
export interface JsonRpcHandlers {
  /** Answers a request; a thrown {@link JsonRpcError} becomes the error response. */
  onRequest(method: string, params: unknown): Promise<unknown>;
  onNotification(method: string, params: unknown): void;
  /** A line that is not JSON-RPC (logged by the caller, never fatal). */
  onProtocolError(message: string): void;
}

/** Standard codes. */
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;

/** Longest line accepted from the other side (a runaway agent must not exhaust memory). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * One end of a JSON-RPC connection over two byte streams.
 *
 * @example
 * ```ts
 * const peer = new JsonRpcPeer(child.stdout, child.stdin, handlers);
 * const result = await peer.request('initialize', { protocolVersion: 1 });
 * ```
 */
export class JsonRpcPeer {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private buffer = '';
  private closedWith: Error | undefined;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly handlers: JsonRpcHandlers,
  ) {
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => this.receive(chunk));
    input.on('end', () => this.close(new ConnectionClosed('the agent closed its output')));
    input.on('error', (error) => this.close(error));
    output.on('error', (error) => this.close(error));
  }

  /** Sends a request and resolves with its result (rejects with {@link JsonRpcError} on an error response). */
  request(method: string, params: unknown): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.closedWith) this.send({ jsonrpc: '2.0', method, params });
  }

  /** Fails every pending request with `reason`; later requests fail at once. */
  close(reason: Error): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const { reject } of this.pending.values()) reject(reason);
    this.pending.clear();
  }

  private send(message: unknown): void {
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.dispatch(line);
      newline = this.buffer.indexOf('\n');
    }
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = '';
      this.handlers.onProtocolError(`a line longer than ${MAX_LINE_BYTES} bytes was dropped`);
    }
  }

  private dispatch(line: string): void {
    let message: {
      id?: unknown;
      method?: unknown;
      params?: unknown;
      result?: unknown;
      error?: { code?: unknown; message?: unknown; data?: unknown };
    };
    try {
      message = JSON.parse(line);
    } catch {
      this.handlers.onProtocolError(`not JSON: ${line.slice(0, 80)}`);
      return;
    }
    if (typeof message !== 'object' || message === null) {
      this.handlers.onProtocolError('not a JSON-RPC message');
      return;
    }
    if (typeof message.method === 'string') {
      if (message.id === undefined || message.id === null) this.handlers.onNotification(message.method, message.params);
      else void this.answer(message.id, message.method, message.params);
      return;
    }
    const waiter = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
    if (!waiter) {
      this.handlers.onProtocolError(`a response to an unknown request id ${JSON.stringify(message.id)}`);
      return;
    }
    this.pending.delete(message.id as number);
    if (message.error) {
      const code = typeof message.error.code === 'number' ? message.error.code : RPC_INTERNAL_ERROR;
      waiter.reject(new JsonRpcError(code, String(message.error.message ?? 'error'), message.error.data));
    } else waiter.resolve(message.result);
  }

  private async answer(id: unknown, method: string, params: unknown): Promise<void> {
    try {
      const result = await this.handlers.onRequest(method, params);
      if (!this.closedWith) this.send({ jsonrpc: '2.0', id, result: result ?? null });
    } catch (error) {
      const rpc = error instanceof JsonRpcError ? error : new JsonRpcError(RPC_INTERNAL_ERROR, (error as Error).message);
      if (!this.closedWith) this.send({ jsonrpc: '2.0', id, error: { code: rpc.rpcCode, message: rpc.message } });
    }
  }
}
