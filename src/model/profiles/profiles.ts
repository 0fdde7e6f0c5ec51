import type { ChatProfile, ProfileName } from "./chat-profile.ts";

const BASE = {
  streamOptions: true,
  echoMessage: [],
  echoToolCall: [],
  toolCallDeltas: "index",
  maxTokensField: "max_tokens",
} as const satisfies Partial<ChatProfile>;

/**
 * Every dialect we know. Hosts are matched as the URL's host name or a
 * subdomain of it; the first profile that matches wins, so the list order
 * matters only for hosts two providers could share (none today).
 */
export const PROFILES: Readonly<Record<ProfileName, ChatProfile>> = {
  openai: { ...BASE, name: "openai", title: "OpenAI", hosts: ["api.openai.com"], maxTokensField: "max_completion_tokens" },
  deepseek: {
    ...BASE,
    name: "deepseek",
    title: "DeepSeek",
    hosts: ["api.deepseek.com"],
    // In thinking mode the tool loop needs the reasoning back (HTTP 400 without
    // it); the first deepseek-reasoner refused it anywhere, but never made tool
    // calls, so sending it only beside tool calls suits both.
    echoMessage: [{ field: "reasoning_content", on: "tool_calls" }],
  },
  gemini: {
    ...BASE,
    name: "gemini",
    title: "Google Gemini (OpenAI-compatible endpoint)",
    hosts: ["generativelanguage.googleapis.com"],
    echoToolCall: ["extra_content"],
    toolCallDeltas: "name-starts-call",
  },
  mistral: { ...BASE, name: "mistral", title: "Mistral", hosts: ["api.mistral.ai", "codestral.mistral.ai"], streamOptions: false },
  groq: { ...BASE, name: "groq", title: "Groq", hosts: ["api.groq.com"] },
  openrouter: {
    ...BASE,
    name: "openrouter",
    title: "OpenRouter",
    hosts: ["openrouter.ai"],
    // OpenRouter asks for its reasoning blocks back on tool-call turns so the upstream model keeps its thread.
    echoMessage: [{ field: "reasoning_details", on: "tool_calls" }],
  },
  ollama: { ...BASE, name: "ollama", title: "Ollama", hosts: ["ollama.com"], ports: [11434] },
  llamacpp: { ...BASE, name: "llamacpp", title: "llama.cpp server", hosts: [] },
  vllm: { ...BASE, name: "vllm", title: "vLLM / SGLang", hosts: [] },
  azure: {
    ...BASE,
    name: "azure",
    title: "Azure OpenAI",
    hosts: ["openai.azure.com", "services.ai.azure.com", "cognitiveservices.azure.com"],
    maxTokensField: "max_completion_tokens",
    keyHeader: "api-key",
  },
  xai: { ...BASE, name: "xai", title: "xAI", hosts: ["api.x.ai"] },
  qwen: { ...BASE, name: "qwen", title: "Qwen (Alibaba Cloud Model Studio)", hosts: ["dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"] },
  generic: { ...BASE, name: "generic", title: "any other OpenAI-compatible server", hosts: [] },
};
