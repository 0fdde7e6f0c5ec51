import type { z } from "zod";
import type { ToolSpec } from "../model/types.ts";
import type { Tool } from "../core/tool.ts";
import { INPUT_SCHEMAS } from "./input-schemas.ts";
import { jsonSchemaOf } from "./json-schema.ts";
import { prebuiltInputSchemas } from "./prebuilt-schemas.ts" with { type: "macro" };

/** Each built-in input schema with its JSON schema, generated at build time (prebuilt-schemas.ts). */
let prebuilt: Map<z.ZodType, Record<string, unknown>> | undefined;

function prebuiltSchemaOf(schema: z.ZodType): Record<string, unknown> | undefined {
  prebuilt ??= new Map(Object.entries(prebuiltInputSchemas()).map(([name, json]) => [INPUT_SCHEMAS[name]!, json]));
  return prebuilt.get(schema);
}

export function toolSpecs(tools: readonly Tool[]): ToolSpec[] {
  return tools.map(specOf);
}

function specOf(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.parameters ?? prebuiltSchemaOf(tool.input) ?? jsonSchemaOf(tool.input) };
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
