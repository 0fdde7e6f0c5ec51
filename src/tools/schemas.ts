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
  return tools.map(specOf);
}

function specOf(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.parameters ?? jsonSchemaOf(tool.input) };
}

/**
 * The specs of the tools offered, each built once per tool object: generating
 * every schema from zod took ~2.6 ms a model call. A tool is immutable, so a
 * changed tool set (an MCP server's new list, a tool a rule now denies) is
 * other tool objects or fewer of them, and is never served a stale spec.
 */
export class ToolSpecCache {
  readonly #specs = new WeakMap<Tool, ToolSpec>();

  specs(tools: readonly Tool[]): ToolSpec[] {
    return tools.map((tool) => {
      let spec = this.#specs.get(tool);
      if (!spec) {
        spec = specOf(tool);
        this.#specs.set(tool, spec);
      }
      return spec;
    });
  }
}
