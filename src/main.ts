#!/usr/bin/env bun
// The entry point: runs the CLI, and is the only place that prints errors and
// decides the exit code (see src/cli/exit-codes.ts and docs/output.md).
import { AgentError } from "./core/errors.ts";
import { expandCompatWords, expandHelpWords, resolveInvocation } from "./cli/argv.ts";
import { errorJson, wantsJsonErrors } from "./cli/error-json.ts";
import { EXIT_CODES, exitCodeFor, isSystemError } from "./cli/exit-codes.ts";
import { renderHelp } from "./cli/help.ts";
import { runLeaf } from "./cli/run-leaf.ts";
import { StdoutClosedError, writeErr, writeOut } from "./cli/output.ts";
import { RunFailedError } from "./cli/run/run-failed.ts";
import { VERSION } from "./cli/version.ts";
import { registerSecret } from "./security/redact.ts";

/**
 * Whether the command line runs agents (a run, a drain, a worker, the session
 * with no command): their teams' durable writes want a wider file-work pool
 * (see widenFsPool). Help and the admin commands start without it.
 */
function hostsAgents(argv: readonly string[]): boolean {
  if (argv.some((word) => word === "--help" || word === "-h")) return false;
  const first = argv[0];
  return first === undefined || first.startsWith("-") || first === "run" || first === "drain" || first === "worker";
}

async function main(typed: string[]): Promise<number> {
  const words = expandHelpWords(typed);
  let argv: string[];
  try {
    argv = words[0] === "exec" ? await codexExecArgv(words.slice(1)) : expandCompatWords(words);
  } catch (error) {
    return failed(error, words);
  }
  // The one answer scripts ask for most, before anything else is loaded.
  if (argv.length === 1 && argv[0] === "--version") {
    await writeOut(`${VERSION}\n`);
    return EXIT_CODES.ok;
  }
  // Before anything queues file work on Bun's thread pool (the pool is sized when made).
  if (hostsAgents(argv)) (await import("./storage/fs-pool.ts")).widenFsPool();
  // Masked from the first line printed; a key from config is added once settings are read.
  registerSecret(process.env.OPENAI_API_KEY);
  registerSecret(process.env.ANTHROPIC_API_KEY);
  try {
    const { rootCommand } = await import("./cli/root.ts");
    // `agent` alone is a session with the Lead on a terminal; elsewhere (a pipe,
    // CI) it is the usage error it always was.
    // Asked only for a line without a command: process.stdin is a stream built on
    // first use, which loads node:stream — milliseconds `mailbox show` does without.
    const invocation = await resolveInvocation(rootCommand, argv, {
      get bare() {
        return process.stdin.isTTY === true && process.stdout.isTTY === true;
      },
    });
    if (invocation.help) {
      await writeOut(await renderHelp(invocation));
    } else if (invocation.version) {
      await writeOut(`${VERSION}\n`);
    } else if (invocation.names.length === 0) {
      const { sessionCommand } = await import("./cli/session/command.ts");
      await runLeaf(sessionCommand, invocation.argv);
    } else {
      // Straight to the command named: the line is checked already, and citty
      // parsing every level again costs more start-up than the command itself.
      await runLeaf(invocation.path.at(-1)!, invocation.argv.slice(invocation.names.length));
    }
    return EXIT_CODES.ok;
  } catch (error) {
    return failed(error, argv);
  }
}

/** The exit code of a command that failed, its error reported. */
async function failed(error: unknown, argv: readonly string[]): Promise<number> {
  // Like other Unix tools in a pipeline: stop quietly once nobody reads.
  if (error instanceof StdoutClosedError) return EXIT_CODES.ok;
  // A run's own failure has printed its result already; anything else gets one
  // JSON object on stdout when JSON was asked for, so a script always has one.
  if (!(error instanceof RunFailedError) && wantsJsonErrors(argv)) {
    await writeOut(`${JSON.stringify(errorJson(error, oneLine(summary(error))))}\n`).catch(() => {});
  }
  await writeErr(errorReport(error, wantsVerbose(argv)));
  return exitCodeFor(error);
}

/**
 * `agent exec …`, codex exec's line, as `agent run …` (loaded for it alone): its
 * warnings printed now, CODEX_API_KEY made the key before anything reads settings.
 */
async function codexExecArgv(rest: string[]): Promise<string[]> {
  const { codexExecLine } = await import("./cli/run/codex-exec.ts");
  const line = codexExecLine(rest, process.env);
  Object.assign(process.env, line.env);
  if (!line.argv.includes("--quiet")) for (const warning of line.warnings) await writeErr(`agent: warning: ${warning}\n`);
  return line.argv;
}

// Read from the raw tokens, not the parse: a line that fails to parse must still
// honour --verbose.
function wantsVerbose(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--verbose");
}

function errorReport(error: unknown, verbose: boolean): string {
  const line = `agent: ${oneLine(summary(error))}\n`;
  return verbose ? `${line}${stackOf(error)}` : line;
}

function summary(error: unknown): string {
  if (error instanceof AgentError) return error.message;
  if (error instanceof Error && error.name === "CLIError") return `${error.message}; run \`agent --help\``;
  if (isSystemError(error)) return `${error.message}; check that the state dir is writable and the disk is not full`;
  const message = error instanceof Error ? error.message : String(error);
  return `internal error: ${message} (a bug: rerun with --verbose and report the stack trace)`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** The stack and every cause below it, for --verbose. */
function stackOf(error: unknown): string {
  let text = "";
  for (let current = error, depth = 0; current !== undefined && depth < 10; depth += 1) {
    text += `${depth === 0 ? "" : "caused by: "}${current instanceof Error ? (current.stack ?? current.message) : String(current)}\n`;
    current = current instanceof Error ? current.cause : undefined;
  }
  return text;
}

// Over a file-size limit (ulimit -f) a write then fails with EFBIG, reported and
// cut back like a full disk, instead of the signal killing the process mid-write.
process.on("SIGXFSZ", () => {});

process.exit(await main(process.argv.slice(2)));
