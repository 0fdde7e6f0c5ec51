/**
 * The assistant turn a Messages request continues. For the API an assistant
 * turn is not one message: it runs from the answer after the user's last own
 * words through every tool round (answer, tool results, answer, …). Thinking is
 * checked over that whole turn — it must begin with a thinking block when
 * thinking is on, and may hold none when it is off — so the adapter and the
 * strict mock (request-rules.ts) both need to find where it begins.
 */

/** A turn as far as the rules look at it: its role and its blocks' types. */
export interface TurnShape<B extends { type?: unknown }> {
  role: string;
  content: readonly B[] | string;
}

export function isThinkingBlock(block: { type?: unknown } | undefined): boolean {
  return block?.type === "thinking" || block?.type === "redacted_thinking";
}

/** A user turn that answers tool calls: it begins with a tool result (text, a reminder say, may follow). */
export function answersTools(turn: TurnShape<{ type?: unknown }> | undefined): boolean {
  return turn?.role === "user" && Array.isArray(turn.content) && turn.content[0]?.type === "tool_result";
}

/**
 * The index of the first assistant message of the turn the request continues:
 * none when the request ends with the user's own words (a new turn begins).
 */
export function assistantTurnStart(turns: ReadonlyArray<TurnShape<{ type?: unknown }>>): number | undefined {
  let last = turns.length - 1;
  if (answersTools(turns[last])) last -= 1;
  if (turns[last]?.role !== "assistant") return undefined;
  let start = last;
  while (start >= 2 && answersTools(turns[start - 1]) && turns[start - 2]?.role === "assistant") start -= 2;
  return start;
}
