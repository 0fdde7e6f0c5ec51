import { readFileSync } from "node:fs";
import { z } from "zod";
import { UsageError } from "../../core/errors.ts";

/**
 * The JSON Schema a run's final answer must satisfy (claude's --json-schema,
 * codex's --output-schema): the schema as given, for the model, and a checker.
 */
export interface AnswerSchema {
  text: string;
  check(answer: string): { ok: true; value: unknown } | { ok: false; problem: string };
}

/** From --json-schema's text or --output-schema's file; a usage error when it is not a JSON Schema. */
export function answerSchema(inline: string | undefined, file: string | undefined): AnswerSchema | undefined {
  if (inline !== undefined && file !== undefined) throw new UsageError("--json-schema and --output-schema both give the answer's schema; give one");
  if (inline === undefined && file === undefined) return undefined;
  const flag = inline !== undefined ? "--json-schema" : "--output-schema";
  let text: string;
  try {
    text = inline ?? readFileSync(file as string, "utf8");
  } catch (error) {
    throw new UsageError(`--output-schema: cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not JSON (${(error as Error).message}); give a JSON Schema, e.g. '{"type":"object","properties":{"ok":{"type":"boolean"}}}'`);
  }
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(parsed as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new UsageError(`${flag} is not a JSON Schema this version reads: ${(error as Error).message}`);
  }
  return {
    text: JSON.stringify(parsed),
    check(answer) {
      let value: unknown;
      try {
        value = JSON.parse(unfenced(answer));
      } catch (error) {
        return { ok: false, problem: `the answer is not JSON (${(error as Error).message})` };
      }
      const result = schema.safeParse(value);
      if (result.success) return { ok: true, value: result.data };
      const problems = result.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(answer)"}: ${issue.message}`);
      return { ok: false, problem: problems.join("; ") };
    },
  };
}

/** Models often wrap JSON in a ```json fence even when told not to. */
function unfenced(answer: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(answer);
  return fenced ? (fenced[1] as string) : answer;
}

/** What the model is told with the prompt. */
export function schemaInstruction(schema: AnswerSchema): string {
  return `Your final answer must be only a JSON value (no prose, no code fence) valid against this JSON Schema:\n${schema.text}`;
}

/** The one corrective turn's prompt. */
export function correctionPrompt(schema: AnswerSchema, problem: string): string {
  return `Your final answer does not match the required JSON Schema: ${problem}. Answer again with only the JSON value, valid against:\n${schema.text}`;
}
