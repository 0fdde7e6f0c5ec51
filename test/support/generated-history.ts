import type { ChatMessage } from "../../src/model/types.ts";

/**
 * One message of any kind a history holds, drawn by `next` (a seeded
 * generator): text that needs escaping now and then, empty texts, error
 * results, answers with no text, with calls (some with malformed arguments)
 * and with what a provider kept beside them under `extraKey`: a list of 1 or 2
 * of `kept(n)`'s entries, or now and then something that is not a list.
 */
export function generatedMessage(next: () => number, n: number, extraKey: string, kept: (n: number, text: (what: string) => string) => Array<Record<string, unknown>>): ChatMessage {
  const text = (what: string) => (next() < 0.2 ? `${what} "${n}"\n\t\u2028 ünï ${"x".repeat(Math.floor(next() * 40))}` : `${what} ${n}`);
  const pick = next();
  if (pick < 0.05) return { role: "system", content: text("system") };
  if (pick < 0.3) return { role: "user", content: next() < 0.1 ? "" : text("user") };
  if (pick < 0.55) return { role: "tool", toolCallId: `t${n}`, content: next() < 0.15 ? "" : text("result"), ...(next() < 0.2 ? { isError: true } : {}) };
  const calls = Array.from({ length: Math.floor(next() * 3) }, (_, i) => ({ id: `t${n}-${i}`, name: "read_file", arguments: next() < 0.15 ? "{not json" : JSON.stringify({ path: text("p") }) }));
  const extra = next();
  return {
    role: "assistant",
    content: next() < 0.3 ? null : text("answer"),
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
    ...(extra < 0.3 ? { extra: { [extraKey]: kept(n, text).slice(0, 1 + Math.floor(next() * 2)) } } : extra < 0.35 ? { extra: { [extraKey]: "not a list" } } : {}),
  };
}
