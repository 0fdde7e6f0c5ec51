import { isTimeKeyedId } from "../core/ids.ts";

/**
 * A UUID (version 8, name-based) derived from `id` and `purpose`: the same inputs
 * always give the same id. It carries no time — a replay must derive the very same
 * id, whenever it runs — so it must never look time-keyed (see timeKeyedId).
 */
export function derivedId(id: string, purpose: string): string {
  const bytes = new Bun.CryptoHasher("sha256").update(`${purpose}:${id}`).digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString("hex");
  const derived = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  // One in 4096 hashes would carry the time-key mark: flip a bit of it.
  return isTimeKeyedId(derived) ? `${derived.slice(0, 17)}${derived[17] === "0" ? "1" : "0"}${derived.slice(18)}` : derived;
}
