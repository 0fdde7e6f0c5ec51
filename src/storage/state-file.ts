import { readFileSync, statSync } from "node:fs";
import type { z } from "zod";
import { CorruptStateFileError } from "../core/errors.ts";
import { type Checked, describeIssues } from "../core/plain-check.ts";
import { isErrno } from "./atomic-file.ts";

/**
 * Reads a JSON state file through its schema: undefined when there is no file,
 * CorruptStateFileError (naming the file and the first problems) when it is not
 * JSON or not valid — never "empty", so a damaged file is not overwritten.
 * With `maxBytes`, a larger file is corrupt too and is not read at all.
 */
export function readStateFile<T>(path: string, schema: z.ZodType<T> | ((value: unknown) => Checked<T>), maxBytes?: number): T | undefined {
  let text: string;
  try {
    const size = maxBytes === undefined ? undefined : statSync(path).size;
    if (size !== undefined && size > maxBytes!) throw new CorruptStateFileError(path, `${size} bytes, larger than such a file can be (${maxBytes} bytes); not read`);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  return parseStateText(path, text, schema);
}

/** A state file's text, already read, through its schema: as readStateFile, for a reader that opened the file itself. */
export function parseStateText<T>(path: string, text: string, schema: z.ZodType<T> | ((value: unknown) => Checked<T>)): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CorruptStateFileError(path, "not valid JSON");
  }
  // A hand-written check (see core/plain-check.ts) or a zod schema.
  if (typeof schema === "function") {
    const checked = schema(json);
    if (!checked.ok) throw new CorruptStateFileError(path, checked.problem);
    return checked.value;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new CorruptStateFileError(path, describeIssues(parsed.error));
  return parsed.data;
}
