import type { ChatMessage } from "../../src/model/types.ts";
import { messageSize } from "../../src/runtime/history-size.ts";
import { seededRandom } from "./seeded-random.ts";

/**
 * A long session's history as the file backend stores it (one JSON record a
 * line), shaped as the runtime writes one: each turn its start, the prompt, 0–3
 * tool steps (a call or two, their results), the answer, a usage record per
 * model call and one for the turn, and its end with the result. With
 * `compactAt` (compaction's thresholdChars), a snapshot whenever the kept
 * messages pass it: a summary and the newest quarter of the threshold, as
 * compaction keeps. Seeded: the same arguments make the same text.
 */
export function longHistory(turns: number, options: { compactAt?: number; seed?: number } = {}): string {
  const random = seededRandom(options.seed ?? 47);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low));
  const prose = (chars: number, n: number) => `${"Read the module, then changed the check where it failed; ".repeat(Math.ceil(chars / 58)).slice(0, chars)} (${n})`;
  const lines: string[] = [];
  let kept: ChatMessage[] = [];
  let keptSize = 0;
  let second = 0;
  const at = () => new Date(Date.UTC(2026, 10, 1) + 1_000 * second++).toISOString();
  const record = (value: Record<string, unknown>) => lines.push(JSON.stringify({ v: 1, ...value }));
  const message = (value: ChatMessage) => {
    record({ type: "message", at: at(), message: value });
    kept.push(value);
    keptSize += messageSize(value);
  };
  // Usage records' keys in their schema's order, as the usage ledger writes them.
  const usage = (type: string, id: string, fields: Record<string, unknown>) => {
    const time = at();
    record({ type: "usage", at: time, record: { v: 1, type, id, at: time, agent: "lead", ...fields } });
  };
  const modelCall = (n: number, calls: number) =>
    usage("model_call", `u-${n}-${lines.length}`, { identity: "lead", model: "gpt-5-mini", input_tokens: between(2_000, 90_000), output_tokens: between(20, 900), cached_input_tokens: between(0, 2_000), tool_calls: calls, duration_ms: between(300, 9_000) });
  for (let n = 0; n < turns; n++) {
    const key = `0190b8a6-7c1e-7d3a-9f00-${String(n).padStart(12, "0")}`;
    record({ type: "turn", at: at(), key, status: "started" });
    message({ role: "user", content: `Step ${n}: ${prose(between(40, 300), n)}` });
    for (let step = between(0, 4); step > 0; step--) {
      const calls = Array.from({ length: between(1, 3) }, (_, i) => ({ id: `call_${n}_${step}_${i}`, name: random() < 0.5 ? "read_file" : "shell", arguments: JSON.stringify({ path: `src/module-${between(0, 80)}.ts` }) }));
      message({ role: "assistant", content: random() < 0.6 ? null : prose(between(20, 200), n), toolCalls: calls });
      modelCall(n, calls.length);
      for (const call of calls) message({ role: "tool", toolCallId: call.id, content: prose(between(30, 1_500), n), ...(random() < 0.05 ? { isError: true } : {}) });
    }
    const answer = prose(between(100, 1_200), n);
    message({ role: "assistant", content: answer });
    modelCall(n, 0);
    record({ type: "turn", at: at(), key, status: "finished", subtype: "success", result: answer });
    usage("turn", `t-${n}`, { key, subtype: "success", duration_ms: between(500, 30_000) });
    if (options.compactAt !== undefined && keptSize > options.compactAt) {
      let from = kept.length;
      for (let size = 0; from > 0 && size + messageSize(kept[from - 1]!) <= options.compactAt / 4; from--) size += messageSize(kept[from - 1]!);
      // A cut never splits a call from its results: it begins at a prompt.
      while (from < kept.length && kept[from]!.role !== "user") from++;
      kept = [{ role: "user", content: `[Summary of the conversation so far] ${prose(3_000, n)}` }, ...kept.slice(from)];
      keptSize = kept.reduce((sum, each) => sum + messageSize(each), 0);
      record({ type: "snapshot", at: at(), messages: kept });
    }
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}
