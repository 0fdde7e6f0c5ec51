import type { FileLedger } from "../file-journal/file-ledger.ts";
import { type ScannedFile, changedPaths, scanWorkspace } from "../file-journal/workspace-scan.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { z } from "zod";
import type { BackgroundJobs } from "./background-jobs.ts";
import { type EnvPolicy, commandEnv } from "../security/env-policy.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import { type GroupResult, runProcessGroup } from "../process/process-group.ts";
import { compileShellDeny, findShellDenial } from "./shell-deny.ts";
import { type ToolContext, defineTool } from "../core/tool.ts";
import { withTruncationNote } from "../core/truncate.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
/** The longest a single call may ask for: a stuck command must not hold a turn for ever. */
export const MAX_SHELL_TIMEOUT_MS = 600_000;
export const DEFAULT_SHELL_OUTPUT_CHARS = 50_000;
/** A background job is meant to outlive a turn, but not to run unattended for ever. */
export const DEFAULT_BACKGROUND_TIMEOUT_MS = 30 * 60_000;

export const ShellInput = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1).describe("The command, run with `sh -c` in the workspace directory."),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(MAX_SHELL_TIMEOUT_MS)
      .optional()
      .describe(`Kill the command (and everything it started) after this many milliseconds; default ${DEFAULT_SHELL_TIMEOUT_MS}.`),
  }),
);
export type ShellInput = z.infer<typeof ShellInput>;

/** The Lead's shell (built with BackgroundJobs) also takes `run_in_background`; teammates' does not. */
export const ShellBackgroundInput = lazySchema(() =>
  ShellInput.unwrap().extend({
    run_in_background: z
      .boolean()
      .optional()
      .describe(
        "Start the command in the background and return its job id at once; its exit code and output arrive later as a message. " +
          `Its timeout is then ${DEFAULT_BACKGROUND_TIMEOUT_MS / 60_000} minutes unless timeout_ms says otherwise.`,
      ),
  }),
);
export type ShellBackgroundInput = z.infer<typeof ShellBackgroundInput>;

export interface ShellToolOptions {
  /** Default timeout of a call (config `shell.timeoutMs`). */
  timeoutMs?: number;
  /** Extra regular expressions refused as destructive (config `shell.deny`), on top of the built-in list. */
  deny?: readonly string[];
  maxOutputChars?: number;
  /** The OS sandbox commands run in (src/security/sandbox/); plain `sh -c` when absent. */
  sandbox?: Sandbox;
  /** Which of the agent's variables commands see (config `shell.env`); the default policy when absent. */
  env?: EnvPolicy;
  /** The session's file journal: the workspace is scanned around each command and what it changed journaled. */
  ledger?: FileLedger;
}

/** How the command ended, in words the model can act on. */
export function exitLine(result: Pick<GroupResult, "exitCode" | "signalCode" | "timedOut">, timeoutMs: number): string {
  if (result.timedOut) return `[timed out after ${timeoutMs} ms; the command and its child processes were killed]`;
  if (result.exitCode === null) return `[killed by signal ${result.signalCode ?? "unknown"}]`;
  return `[exit code ${result.exitCode}]`;
}

/**
 * Throws `ConfigError` for an invalid `deny` pattern, so a bad config fails at start-up, not on the first call.
 * With `background`, the tool can also start commands in the background (`run_in_background`).
 */
export function shellTool(options: ShellToolOptions = {}, background?: BackgroundJobs) {
  const deny = compileShellDeny(options.deny);
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
  const maxChars = options.maxOutputChars ?? DEFAULT_SHELL_OUTPUT_CHARS;
  // The flag is in the schema only where it works, so no agent is offered what it cannot use.
  const input: z.ZodType<ShellBackgroundInput> = background ? ShellBackgroundInput : ShellInput;
  return defineTool({
    name: "shell",
    description:
      "Run a shell command (`sh -c`) in the workspace directory and return its combined stdout and stderr " +
      `(cut after ${maxChars} characters) and its exit code. Stdin is empty; there is no terminal. ` +
      "Destructive commands (rm -rf /, mkfs, dd to a device, shutdown, force-push to main, …) are refused." +
      (background ? " With run_in_background it returns a job id at once and reports completion later as a message." : ""),
    input,
    effect: "execute",
    subject: (input) => input.command,
    async run(input, context) {
      const denial = findShellDenial(input.command, deny);
      if (denial) {
        return {
          content: `refused: this command ${denial.why} (deny pattern /${denial.pattern}/); it was not run`,
          isError: true,
        };
      }
      if (input.run_in_background && background) {
        const id = background.start(input.command, { workspace: context.workspace, timeoutMs: input.timeout_ms });
        return { content: `started background job ${id}; its exit code and output will arrive as a message when it ends` };
      }
      const timeoutMs = input.timeout_ms ?? defaultTimeoutMs;
      const ledger = options.ledger;
      const skip = (absolute: string) => context.fence?.inStateRoot(absolute) ?? false;
      const before = ledger ? scanWorkspace(context.workspace, ledger.shellScanMaxFiles, skip) : undefined;
      const result = await runProcessGroup({
        cmd: options.sandbox ? options.sandbox.command(input.command, context.workspace) : ["sh", "-c", input.command],
        cwd: context.workspace,
        // Secrets (the API key above all) are not the command's to see.
        env: commandEnv(options.env),
        capture: "combined",
        maxChars,
        timeoutMs,
        signal: context.signal,
      });
      if (ledger && before) await journalCommand(ledger, context, before, skip);
      // The pipeline turns an abort into "interrupted"; the group is already killed.
      if (result.aborted) throw new Error("interrupted");
      const output = withTruncationNote(result.output, "redirect the output to a file and read parts of it, or filter it");
      const body = output === "" ? "(no output)\n" : output.endsWith("\n") ? output : `${output}\n`;
      return { content: `${body}${exitLine(result, timeoutMs)}`, ...(result.timedOut ? { isError: true } : {}) };
    },
  });
}

/** Journals the files a command changed, found by scanning the workspace again (docs/files.md#the-change-journal). */
async function journalCommand(ledger: FileLedger, context: ToolContext, before: Map<string, ScannedFile>, skip: (absolute: string) => boolean): Promise<void> {
  const after = scanWorkspace(context.workspace, ledger.shellScanMaxFiles, skip);
  if (!after) return;
  const paths = changedPaths(before, after);
  if (paths.length === 0) return;
  const files = new WorkspaceFiles();
  const read = (path: string) => {
    try {
      return files.read(context, path).bytes ?? undefined;
    } catch {
      // Gone again, or now a link out of the workspace: nothing to keep.
      return undefined;
    }
  };
  const meta = { agent: context.identity, kind: "shell" as const, turn: context.idempotencyKey, tool: "shell", ...(context.callId ? { call: context.callId } : {}) };
  await ledger.journalShell(meta, paths, before, after, read);
}
