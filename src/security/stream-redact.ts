import { longestSecretLength, maskedSecrets, redact } from "./redact.ts";

/**
 * Masks secrets over a stream of pieces (an answer's deltas) rather than piece
 * by piece: a key split across two deltas passes a per-piece mask, and the
 * reader who joins them has it whole. Each push masks what is held plus the new
 * piece, then keeps back the end that could be the start of a secret (at most
 * the longest secret less one character), so it waits for what follows;
 * `end()` lets out the rest. Text that starts no secret is shown at once.
 */
export class StreamRedactor {
  #held = "";

  /** The text that can be shown now (possibly empty). */
  push(piece: string): string {
    const masked = redact(this.#held + piece);
    const keep = startOfSecretAtEnd(masked);
    this.#held = masked.slice(masked.length - keep);
    return masked.slice(0, masked.length - keep);
  }

  /** Whatever is still held, masked: the stream is over (or cut). */
  end(): string {
    const rest = redact(this.#held);
    this.#held = "";
    return rest;
  }
}

/** The length of the longest end of `text` that a secret begins with (0 when none does). */
function startOfSecretAtEnd(text: string): number {
  const secrets = maskedSecrets();
  for (let length = Math.min(text.length, longestSecretLength() - 1); length > 0; length -= 1) {
    const end = text.slice(text.length - length);
    if (secrets.some((secret) => secret.startsWith(end))) return length;
  }
  return 0;
}
