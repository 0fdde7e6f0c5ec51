/**
 * The rules the Responses API enforces on a stateless request's input items
 * beyond their types, as data: each with the message of the HTTP 400 it answers
 * a breach with (as the API's `invalid_request_error` bodies quote it in public
 * issue threads). Shared by the adapter's tests and the strict mock server
 * (test/support/responses-strict.ts), as the Messages API's are
 * (src/model/anthropic/request-rules.ts).
 */

type Item = Record<string, unknown>;

/** What only the server knows: the answers it gave. */
export interface ResponsesRuleContext {
  /** Whether this reasoning item is one an answer carried, its encrypted content unchanged. */
  issued(item: Item): boolean;
  /** The id of the reasoning item that came before this call in its answer; none when it had none. */
  reasoningBefore(callId: string): string | undefined;
}

export interface ResponsesRule {
  name: string;
  /** The 400's message; each `{…}` is filled from what `find` returns. */
  says: string;
  find(input: Item[], context: ResponsesRuleContext | undefined): Record<string, string> | undefined;
}

/** An item the model wrote: what a reasoning item must be followed by. */
const isOutput = (item: Item | undefined) => item?.type === "function_call" || item?.role === "assistant" || item?.type === "message";

export const RESPONSES_REQUEST_RULES: readonly ResponsesRule[] = [
  {
    name: "call-has-output",
    says: "No tool output found for function call {call_id}.",
    find: (input) => {
      const answered = new Set(input.filter((item) => item.type === "function_call_output").map((item) => String(item.call_id)));
      const call = input.find((item) => item.type === "function_call" && !answered.has(String(item.call_id)));
      return call ? { call_id: String(call.call_id) } : undefined;
    },
  },
  {
    name: "output-has-call",
    says: "No tool call found for function call output with call_id {call_id}.",
    find: (input) => {
      const called = new Set<string>();
      for (const item of input) {
        if (item.type === "function_call") called.add(String(item.call_id));
        if (item.type === "function_call_output" && !called.has(String(item.call_id))) return { call_id: String(item.call_id) };
      }
      return undefined;
    },
  },
  {
    name: "reasoning-followed",
    says: "Item '{id}' of type 'reasoning' was provided without its required following item.",
    find: (input) => {
      const at = input.findIndex((item, i) => item.type === "reasoning" && !isOutput(input[i + 1]) && input[i + 1]?.type !== "reasoning");
      return at < 0 ? undefined : { id: String(input[at]!.id) };
    },
  },
  {
    name: "reasoning-unchanged",
    says: "The encrypted content for item {id} could not be verified.",
    find: (input, context) => {
      const item = context ? input.find((item) => item.type === "reasoning" && !context.issued(item)) : undefined;
      return item ? { id: String(item.id) } : undefined;
    },
  },
  {
    name: "call-after-its-reasoning",
    says: "Item '{id}' of type 'function_call' was provided without its required 'reasoning' item: '{reasoning}'.",
    find: (input, context) => {
      if (!context) return undefined;
      for (let i = 0; i < input.length; i++) {
        const call = input[i]!;
        const reasoning = call.type === "function_call" ? context.reasoningBefore(String(call.call_id)) : undefined;
        if (reasoning === undefined) continue;
        // Its answer's items run back from it to the last item that is not the model's.
        let start = i;
        while (start > 0 && (isOutput(input[start - 1]) || input[start - 1]!.type === "reasoning")) start -= 1;
        if (!input.slice(start, i).some((item) => item.type === "reasoning" && item.id === reasoning)) return { id: String(call.id ?? call.call_id), reasoning };
      }
      return undefined;
    },
  },
];

export interface ResponsesBreach {
  rule: string;
  message: string;
}

/** The first rule the request's input breaks, in the order above. */
export function responsesBreach(request: { input?: unknown }, context?: ResponsesRuleContext): ResponsesBreach | undefined {
  const input = Array.isArray(request.input) ? request.input.filter((item): item is Item => typeof item === "object" && item !== null) : [];
  for (const rule of RESPONSES_REQUEST_RULES) {
    const found = rule.find(input, context);
    if (found) return { rule: rule.name, message: rule.says.replace(/\{(\w+)\}/g, (_, key: string) => found[key] ?? `{${key}}`) };
  }
  return undefined;
}

/** The API's 400 body for a breach. */
export function responsesBreachBody(breach: ResponsesBreach): Item {
  return { error: { message: breach.message, type: "invalid_request_error", param: "input", code: null } };
}
