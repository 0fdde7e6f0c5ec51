import { z } from "zod";
import type { ToolSpec } from "../model/types.ts";
import type { Tool } from "../core/tool.ts";

/**
 * The one place a tool's zod schema becomes the JSON schema the model sees, so
 * what the model is told and what the pipeline validates cannot drift apart.
 * `io: "input"` describes what the model may send (before any transform).
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

export function toolSpecs(tools: readonly Tool[]): ToolSpec[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters ?? jsonSchemaOf(tool.input) }));
}
