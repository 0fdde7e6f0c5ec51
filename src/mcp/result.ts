import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../core/tool.ts";
import { capText, withTruncationNote } from "../core/truncate.ts";

type ContentBlock = CallToolResult["content"][number];

/** What a binary payload is, without the payload: base64 length to bytes. */
function size(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0);
  return `${bytes} bytes`;
}

/** Text passes through; images, audio and resources become a one-line summary the model can reason about. */
function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${size(block.data)}; not shown]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${size(block.data)}; not played]`;
    case "resource_link":
      return `[resource link: ${block.uri}${block.name ? ` "${block.name}"` : ""}${block.mimeType ? ` (${block.mimeType})` : ""}]`;
    case "resource": {
      const { resource } = block;
      const mime = resource.mimeType ? `${resource.mimeType}, ` : "";
      const body = "text" in resource ? `${resource.text.length} characters of text` : `${size(resource.blob)}`;
      return `[resource: ${resource.uri} (${mime}${body}); not shown]`;
    }
    default:
      return `[${(block as { type: string }).type} content; not shown]`;
  }
}

/**
 * An MCP tool result as the model sees it: the content blocks one after the
 * other, structured content as JSON when there is no content, `isError` kept,
 * and the whole cut like `shell` output.
 */
export function toToolResult(result: CallToolResult, maxChars: number): ToolResult {
  let text = result.content.map(describeBlock).join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text === "") text = "(no output)";
  const content = withTruncationNote(capText(text, maxChars), "ask the tool for less, e.g. a narrower query or a page");
  return result.isError ? { content, isError: true } : { content };
}
