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

/**
 * A history's lines as the runtime writes them (JSON.stringify of each record,
 * in its schema's key order), drawn by `next`: messages of every kind
 * (generatedMessage), turns started, joined, interrupted and finished with
 * every subtype, usage records of both kinds with and without their optional
 * fields, and now and then a snapshot of a few messages, as compaction writes.
 */
export function generatedHistoryLines(next: () => number, count: number): string[] {
  const subtypes = ["success", "error_max_turns", "error_model", "error_interrupted", "error_budget"];
  const lines: string[] = [];
  const open: string[] = [];
  let second = 0;
  const at = () => new Date(Date.UTC(2026, 2, 1) + 1_000 * second++).toISOString();
  const message = (n: number) => generatedMessage(next, n, "reasoning", (i, text) => [{ type: "reasoning", id: `rs_${i}`, summary: [{ text: text("thought") }] }, { type: "reasoning", encrypted: `e${i}` }]);
  for (let n = 0; n < count; n++) {
    const pick = next();
    let record: Record<string, unknown>;
    if (pick < 0.45) record = { v: 1, type: "message", at: at(), message: message(n) };
    else if (pick < 0.6 || open.length === 0) {
      const key = `key-${n}`;
      const joins = open.length > 0 && next() < 0.25 ? open[0] : undefined;
      record = { v: 1, type: "turn", at: at(), key, status: "started", ...(joins ? { joins } : {}) };
      open.push(key);
    } else if (pick < 0.75) {
      const key = open.splice(Math.floor(next() * open.length), 1)[0]!;
      const subtype = subtypes[Math.floor(next() * subtypes.length)];
      record = next() < 0.7
        ? { v: 1, type: "turn", at: at(), key, status: "finished", subtype, result: next() < 0.1 ? "" : `result "${n}"\n` }
        : { v: 1, type: "turn", at: at(), key, status: "interrupted", ...(next() < 0.5 ? { subtype: "error_interrupted" } : {}) };
    } else if (pick < 0.93) {
      const time = at();
      const id = next() < 0.8 ? { id: `u-${n}` } : {};
      record = {
        v: 1,
        type: "usage",
        at: time,
        record: next() < 0.7
          ? { v: 1, type: "model_call", ...id, at: time, agent: "lead", identity: next() < 0.8 ? "lead" : "task-1", model: "gpt-5-mini", input_tokens: n * 10, output_tokens: n, ...(next() < 0.5 ? { cached_input_tokens: n } : {}), tool_calls: n % 3, duration_ms: n * 7 }
          : { v: 1, type: "turn", ...id, at: time, agent: "lead", key: `key-${n}`, subtype: "success", duration_ms: n },
      };
    } else {
      record = { v: 1, type: "snapshot", at: at(), messages: Array.from({ length: Math.floor(next() * 5) }, (_, i) => message(n * 10 + i)) };
    }
    lines.push(JSON.stringify(record));
  }
  return lines;
}
