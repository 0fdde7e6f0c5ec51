import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../../core/errors.ts";
import { writeFileAtomic } from "../../storage/atomic-file.ts";
import { redact } from "../../security/redact.ts";

/**
 * `--output-last-message FILE` as an absolute path, checked before the run so a
 * typo in the directory costs nothing: the file itself is written at the end.
 */
export function lastMessagePath(flag: string | undefined, cwd: string = process.cwd()): string | undefined {
  if (flag === undefined) return undefined;
  if (flag.length === 0) throw new UsageError("--output-last-message needs a file path");
  const path = resolve(cwd, flag);
  let isDir = false;
  try {
    isDir = statSync(dirname(path)).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new UsageError(`--output-last-message ${flag}: the directory ${dirname(path)} does not exist; create it or choose another path`);
  return path;
}

/** The final answer, masked like stdout, replaced whole (never a half-written file for a script to read). */
export function writeLastMessage(path: string, unsafe: string): void {
  const text = redact(unsafe);
  writeFileAtomic(path, text.endsWith("\n") || text === "" ? text : `${text}\n`);
}
