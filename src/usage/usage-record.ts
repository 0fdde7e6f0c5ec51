import { z } from "zod";
import { UtcInstant } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

const Count = lazySchema(() => z.number().int().nonnegative());
/**
 * Names a record wherever it is kept: the agent's history carries a copy (that
 * copy is the durable one), and usage.jsonl is re-derived from the histories
 * by it. Lines written before records had ids have none.
 */
const RecordId = lazySchema(() => z.string().min(1).optional());

/**
 * One line of `<state-dir>/usage.jsonl`: what a model call used, or how long a
 * turn kept an agent busy. `agent` is who is billed (a task subagent's calls
 * are its parent's); `identity` is who asked. `v` versions the record format.
 */
export const UsageRecord = lazySchema(() =>
  z.discriminatedUnion("type", [
    z.strictObject({
      v: z.literal(1),
      type: z.literal("model_call"),
      id: RecordId,
      at: UtcInstant,
      agent: z.string().min(1),
      identity: z.string().min(1),
      model: z.string().min(1),
      input_tokens: Count,
      output_tokens: Count,
      cached_input_tokens: Count.optional(),
      /** Of the input, the tokens written to the prompt cache (priced at the cache-write rate). */
      cache_write_input_tokens: Count.optional(),
      /** Tool calls the answer asked for. */
      tool_calls: Count,
      duration_ms: Count,
    }),
    z.strictObject({
      v: z.literal(1),
      type: z.literal("turn"),
      id: RecordId,
      at: UtcInstant,
      agent: z.string().min(1),
      key: z.string().min(1),
      subtype: z.string().min(1),
      duration_ms: Count,
    }),
  ]),
);
export type UsageRecord = z.infer<typeof UsageRecord>;
export type ModelCallRecord = Extract<UsageRecord, { type: "model_call" }>;
export type TurnRecord = Extract<UsageRecord, { type: "turn" }>;

/**
 * An agent's usage records that no durable write holds yet (the usage ledger's,
 * for one billed agent). The agent's history takes them into its next append —
 * they ride on the fsync or commit the step makes anyway — and gives them back
 * when that append fails.
 */
export interface UsageCarrier {
  take(): UsageRecord[];
  giveBack(records: UsageRecord[]): void;
}
