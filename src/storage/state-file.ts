import { readFileSync } from "node:fs";
import type { z } from "zod";
import { CorruptStateFileError } from "../core/errors.ts";
import { describeIssues } from "../core/message.ts";
import { isErrno } from "./atomic-file.ts";

/**
 * Reads a JSON state file through its schema: undefined when there is no file,
 * CorruptStateFileError (naming the file and the first problems) when it is not
 * JSON or not valid — never "empty", so a damaged file is not overwritten.
 */
export function readStateFile<T>(path: string, schema: z.ZodType<T>): T | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CorruptStateFileError(path, "not valid JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new CorruptStateFileError(path, describeIssues(parsed.error));
  return parsed.data;
}
