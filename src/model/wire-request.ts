import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ChatProfile } from "./profiles/chat-profile.ts";
import type { AssistantMessage, ChatMessage, ToolSpec, WireExtra } from "./types.ts";

/** The request body for `messages`, in the profile's dialect; `maxTokens` caps the answer when given. */
export function toWireRequest(
  model: string,
  messages: ChatMessage[],
  tools: ToolSpec[],
  profile: ChatProfile,
  maxTokens?: number,
): ChatCompletionCreateParamsNonStreaming {
  return {
    model,
    messages: messages.map((message) => toWireMessage(message, profile)),
    // Some compatible servers reject an empty `tools` array: leave it out instead.
    ...(tools.length > 0 ? { tools: toWireTools(tools) } : {}),
    ...(maxTokens !== undefined ? { [profile.maxTokensField]: maxTokens } : {}),
  };
}

export function toWireMessage(message: ChatMessage, profile: ChatProfile): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      return toWireAssistant(message, profile);
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

function toWireAssistant(message: AssistantMessage, profile: ChatProfile): ChatCompletionMessageParam {
  const calls = message.toolCalls ?? [];
  const echoed = echoedMessageFields(message, profile);
  if (calls.length === 0) return { role: "assistant", content: message.content ?? "", ...echoed };
  return {
    role: "assistant",
    content: message.content,
    ...echoed,
    tool_calls: calls.map((call) => ({
      ...picked(call.extra, profile.echoToolCall),
      id: call.id,
      type: "function" as const,
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

/** The received fields this profile sends back on this message; none for a profile that echoes nothing. */
function echoedMessageFields(message: AssistantMessage, profile: ChatProfile): WireExtra {
  const hasCalls = (message.toolCalls ?? []).length > 0;
  const fields = profile.echoMessage.filter((echo) => echo.on === "always" || hasCalls).map((echo) => echo.field);
  return picked(message.extra, fields);
}

function picked(extra: WireExtra | undefined, fields: readonly string[]): WireExtra {
  const out: WireExtra = {};
  if (extra === undefined) return out;
  for (const field of fields) if (extra[field] !== undefined) out[field] = extra[field];
  return out;
}

export function toWireTools(tools: readonly ToolSpec[]): ChatCompletionTool[] {
  return tools.map(toWireTool);
}

export function toWireTool(tool: ToolSpec): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
