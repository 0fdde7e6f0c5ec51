import { z } from "zod";
import type { AssistantMessage, FinishReason, ModelResponse, ToolCall, Usage, WireExtra } from "./types.ts";
import { extraField, messageExtras, toolCallExtras } from "./wire-extra.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * A whole (non-streamed) chat completion, checked rather than trusted: a wrong
 * --base-url can return HTML with status 200, and local servers differ in what
 * they omit.
 */
export const WireUsage = lazySchema(() =>
  z
    .object({
      prompt_tokens: z.number().nullish(),
      completion_tokens: z.number().nullish(),
      prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
    })
    .nullish(),
);

/**
 * Text, or a list of parts (Mistral's reasoning models send `[{"type":"thinking",…},
 * {"type":"text","text":…}]`): only the text parts are the answer.
 */
export const WireContent = lazySchema(() =>
  z.union([z.string(), z.array(z.looseObject({ type: z.string().nullish(), text: z.unknown().optional() }))]).nullish(),
);

export function contentText(content: z.infer<typeof WireContent>): string | undefined {
  if (content === null || content === undefined) return undefined;
  if (typeof content === "string") return content;
  const text = content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
  return text === "" ? undefined : text;
}

const WireCompletion = lazySchema(() =>
  z.object({
    choices: z
      .array(
        z.object({
          // Loose: the fields beside the standard ones are kept for the profile to send back.
          message: z.looseObject({
            content: WireContent,
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.looseObject({
                  id: z.string().nullish(),
                  function: z.object({
                    name: z.string().min(1),
                    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
                  }),
                }),
              )
              .nullish(),
          }),
          finish_reason: z.string().nullish(),
        }),
      )
      .min(1),
    usage: WireUsage,
  }),
);
type WireCompletion = z.infer<typeof WireCompletion>;

/** An answer that is not a chat completion (or not a stream of chunks): retried once, then reported with its first bytes. */
export class InvalidCompletionError extends Error {
  constructor(
    readonly detail: string,
    /** The body's first 200 bytes, on one line. */
    readonly firstBytes: string,
  ) {
    super(detail);
  }
}

/** A completion with no text and no tool calls: retried once, then reported. */
export class EmptyCompletionError extends Error {}

/** The body of a non-streamed answer, parsed. */
export function parseCompletionBody(text: string): ModelResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidCompletionError("not JSON", firstBytes(text));
  }
  return fromWireResponse(json, text);
}

export function fromWireResponse(raw: unknown, body = JSON.stringify(raw) ?? ""): ModelResponse {
  const parsed = WireCompletion.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    throw new InvalidCompletionError(`${issue?.message ?? "an unexpected shape"}${where}`, firstBytes(body));
  }
  const [choice] = parsed.data.choices as [WireCompletion["choices"][number]];
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => ({
    id: call.id || generatedCallId(index),
    name: call.function.name,
    // Raw text on purpose: the tool pipeline parses it and reports malformed JSON to the model.
    arguments:
      typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
    ...extraField(toolCallExtras(call)),
  }));
  const content = contentText(choice.message.content) ?? choice.message.refusal ?? null;
  return assembled(content, toolCalls, choice.finish_reason, parsed.data.usage, messageExtras(choice.message));
}

/** The response from its parts; refuses an empty one. */
export function assembled(
  content: string | null,
  toolCalls: ToolCall[],
  reason: string | null | undefined,
  wireUsage: z.infer<typeof WireUsage>,
  extra: WireExtra = {},
): ModelResponse {
  if (toolCalls.length === 0 && (content ?? "").trim() === "") throw new EmptyCompletionError("an empty answer");
  const message: AssistantMessage = {
    role: "assistant",
    content,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...extraField(extra),
  };
  return { message, finishReason: finishReason(reason, toolCalls.length > 0), usage: usage(wireUsage) };
}

/** A few local servers send no call id; the next request must still pair results with calls. */
export function generatedCallId(index: number): string {
  return `call_${crypto.randomUUID()}_${index}`;
}

function finishReason(reason: string | null | undefined, hasToolCalls: boolean): FinishReason {
  // Ollama and some llama.cpp builds say "stop" while returning tool calls.
  if (hasToolCalls && (reason === "stop" || !reason)) return "tool_calls";
  switch (reason) {
    case "stop":
    case "length":
    case "content_filter":
    case "tool_calls":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "other";
  }
}

function usage(wire: z.infer<typeof WireUsage>): Usage {
  const count = (n: number | null | undefined) => (n && n > 0 ? Math.trunc(n) : 0);
  const cached = wire?.prompt_tokens_details?.cached_tokens;
  return {
    inputTokens: count(wire?.prompt_tokens),
    outputTokens: count(wire?.completion_tokens),
    // Only when the endpoint says: "0 cached" and "not reported" are different facts.
    ...(typeof cached === "number" ? { cachedInputTokens: count(cached) } : {}),
  };
}

/** The first 200 bytes of a body, on one line, for an error message. */
export function firstBytes(text: string): string {
  const bytes = new TextEncoder().encode(text).subarray(0, 200);
  return new TextDecoder().decode(bytes).replace(/\s+/g, " ").trim();
}

/** Errors are one line: a server's message can hold newlines, HTML or a stack. */
export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
