import { z } from "zod";

/**
 * The one place a tool's zod schema becomes the JSON schema the model sees, so
 * what the model is told and what the pipeline validates cannot drift apart.
 * `io: "input"` describes what the model may send (before any transform).
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}
