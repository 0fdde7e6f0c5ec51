import { INPUT_SCHEMAS } from "./input-schemas.ts";
import { jsonSchemaOf } from "./json-schema.ts";

/**
 * Run as a Bun macro (`with { type: "macro" }` in schemas.ts): the JSON schema
 * of every built-in tool's input, generated when the code is bundled or
 * transpiled, so a process never runs zod's JSON-schema generator for them —
 * cold, it cost 10–40 ms of the path to the first model request.
 */
export function prebuiltInputSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(INPUT_SCHEMAS).map(([name, schema]) => [name, jsonSchemaOf(schema)]));
}
