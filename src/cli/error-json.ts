import { AgentError } from "../core/errors.ts";
import { EXIT_CODES, EXIT_MEANINGS, exitKindFor } from "./exit-codes.ts";
import { OUTPUT_FORMATS } from "./run/result-json.ts";

/**
 * Whether the command line asked for machine-readable output (`--output json` or
 * `stream-json`, `--output-format` the same, `--json`). Read from the raw tokens, not the parse: a line that fails to
 * parse (`agent run --output json --bogus`) must still get its JSON error.
 */
export function wantsJsonErrors(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  const tokens = end === -1 ? argv : argv.slice(0, end);
  let format: string | undefined;
  tokens.forEach((token, i) => {
    // claude -p's --output-format too; `agent run`'s --json (codex exec's) asks for JSON lines,
    // where other commands' --json is their own listing's format.
    if (token === "--json" && argv[0] === "run") format = "stream-json";
    for (const flag of ["--output", "--output-format"]) {
      const value = token === flag ? tokens[i + 1] : token.startsWith(`${flag}=`) ? token.slice(flag.length + 1) : undefined;
      if (value !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(value)) format = value;
    }
  });
  return format === "json" || format === "stream-json";
}

/**
 * The result object for a command that failed before (or outside) its run: the
 * same `type`/`subtype`/`is_error`/`result` keys a script reads from a run's
 * result, with the exit code and its meaning.
 */
export function errorJson(error: unknown, message: string) {
  const kind = exitKindFor(error);
  return {
    type: "result",
    subtype: `error_${kind}`,
    is_error: true,
    result: message,
    exit_code: EXIT_CODES[kind],
    exit_meaning: EXIT_MEANINGS[kind],
    ...(error instanceof AgentError ? { error_code: error.code } : {}),
  };
}
