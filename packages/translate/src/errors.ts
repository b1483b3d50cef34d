/**
 * @module errors
 * The one error of the translators: a request or response that cannot be
 * carried from one API family to another.
 */

/** Codes of {@link TranslationError}. */
export type TranslationErrorCode = 'invalid_request' | 'unsupported_translation' | 'invalid_response';

/**
 * A request or response that cannot be carried from one API family to
 * another. A request: a malformed field (`invalid_request`), or a feature
 * the target family has no way to express (`unsupported_translation`), both
 * the client's to fix; `param` names the field, as a JSON path into the
 * client's body (`messages[2].content`). A response: the provider's answer
 * cannot be written in the client's family (`invalid_response`, for example
 * tool call arguments that are not JSON, for a family that wants an object),
 * the provider's fault, not the client's.
 *
 * @example
 * ```ts
 * try { translateRequest('openai-chat', 'anthropic-messages', body, ctx); }
 * catch (e) { if (e instanceof TranslationError) reply(400, e.param, e.message); }
 * ```
 */
export class TranslationError extends Error {
  override name = 'TranslationError';
  readonly code: TranslationErrorCode;
  readonly param: string | undefined;

  constructor(code: TranslationErrorCode, message: string, param?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.param = param;
  }
}
