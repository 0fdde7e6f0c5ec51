import { defineCommand } from "citty";
import { PERMISSION_MODES } from "../config/config.ts";
import { type Settings, loadSettings } from "../config/load.ts";
import { LEAD } from "../core/agent-name.ts";
import { parseDuration } from "../core/duration.ts";
import { UsageError } from "../core/errors.ts";
import { uuidV7Source } from "../core/ids.ts";
import { ttyAskerIfInteractive } from "../permissions/tty-asker.ts";
import { buildLead } from "../runtime/lead.ts";
import type { RunResult } from "../runtime/run-types.ts";
import { RuntimeLock } from "../storage/runtime-lock.ts";
import { globalArgs } from "./args.ts";
import { writeErr, writeOut } from "./output.ts";
import { OrderedWriter } from "./run/ordered-writer.ts";
import type { ProgressLevel } from "./run/progress.ts";
import { readPrompt } from "./run/prompt.ts";
import { OUTPUT_FORMATS, type OutputFormat, type RunInfo } from "./run/result-json.ts";
import { RunOutput, stderrCanAnimate } from "./run/run-output.ts";
import { RunFailedError } from "./run/run-failed.ts";
import { RunStop } from "./run/stop.ts";
import { resolveWorkspace, runStateDir } from "./run/workspace.ts";
import { VERSION } from "./version.ts";

export const runCommand = defineCommand({
  meta: { name: "run", description: "Run one Lead user turn headless: the result on stdout, progress on stderr" },
  args: {
    // Upper case: the flag --prompt already has the key "prompt". citty also copies
    // --prompt into PROMPT, so the operand is read from `args._` below.
    PROMPT: { type: "positional", required: false, valueHint: "prompt", description: "What to do; - reads it from stdin" },
    prompt: { type: "string", valueHint: "text", description: "The prompt, instead of PROMPT; - reads it from stdin" },
    workspace: { type: "string", valueHint: "dir", description: "Directory the agent works in (default: the current directory)" },
    model: { type: "string", valueHint: "name", description: "Model name (default: $AGENT_MODEL, config, else gpt-4o-mini)" },
    "base-url": { type: "string", valueHint: "url", description: "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, config, else OpenAI)" },
    "max-turns": { type: "string", valueHint: "n", description: "Model calls allowed in the run (default: 50)" },
    "permission-mode": { type: "enum", options: [...PERMISSION_MODES], description: "What tools may do without asking (default: default)" },
    output: { type: "enum", options: [...OUTPUT_FORMATS], default: "text", description: "What stdout carries" },
    timeout: { type: "string", valueHint: "duration", description: "Stop the whole run after this long, e.g. 90s or 10m" },
    quiet: { type: "boolean", description: "Print nothing on stderr but errors" },
    record: { type: "string", valueHint: "file", description: "Append every model request and response to this JSONL cassette" },
    replay: { type: "string", valueHint: "file", description: "Answer model requests from this cassette, with no network" },
    "wait-lock": { type: "boolean", description: "Wait for another runtime using the state dir to finish instead of failing" },
    ...globalArgs,
    verbose: { type: "boolean", description: "Show every tool result, model turn and retry; stack traces with errors" },
  },
  async run({ args }) {
    if (args.quiet && args.verbose) throw new UsageError("--quiet and --verbose contradict each other; give one");
    const format = args.output as OutputFormat;
    const level: ProgressLevel = args.quiet ? "quiet" : args.verbose ? "verbose" : "normal";
    const timeout = args.timeout === undefined ? undefined : { ms: parseTimeout(args.timeout), text: args.timeout };
    const workspace = resolveWorkspace(args.workspace);
    const stateDir = runStateDir(args, workspace);
    const { settings, warnings } = loadSettings({
      stateDir,
      flags: {
        model: args.model,
        baseUrl: args["base-url"],
        maxTurns: args["max-turns"],
        permissionMode: args["permission-mode"],
        record: args.record,
        replay: args.replay,
      },
    });
    // Read before the lock is taken: a slow pipe must not hold the state dir.
    const prompt = await readPrompt({ positional: args._[0], flag: args.prompt });

    const stderr = new OrderedWriter(writeErr);
    if (level !== "quiet") for (const warning of warnings) stderr.write(`agent: warning: ${warning}\n`);
    const output = new RunOutput({ format, level, stdout: writeOut, stderr, animate: stderrCanAnimate(), version: VERSION });
    let run: RunResult;
    try {
      run = await runOnce({ prompt, settings, workspace, stateDir, timeout, waitLock: args["wait-lock"] === true, output });
    } finally {
      // Progress first, then whatever error line the entry prints.
      await stderr.flush();
    }
    if (run.isError) throw new RunFailedError(run);
  },
});

function parseTimeout(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new UsageError(`--timeout must be longer than 0, e.g. --timeout 10m`);
  return ms;
}

interface RunRequest {
  prompt: string;
  settings: Settings;
  workspace: string;
  stateDir: string;
  timeout: { ms: number; text: string } | undefined;
  waitLock: boolean;
  output: RunOutput;
}

/** Takes the state dir, runs one Lead user turn, prints its result; resources close in reverse order. */
async function runOnce({ prompt, settings, workspace, stateDir, timeout, waitLock, output }: RunRequest): Promise<RunResult> {
  using stop = new RunStop(timeout);
  const lock = await RuntimeLock.acquire(stateDir, {
    waitMs: waitLock ? stop.remainingMs() : 0,
    onLost: (error) => stop.abort(`lost the runtime lock on ${stateDir} (${error.message}); another runtime may own it now`),
  });
  try {
    const info: RunInfo = {
      agent: LEAD,
      model: settings.model,
      workspace,
      stateDir,
      permissionMode: settings.permissionMode,
      idempotencyKey: uuidV7Source.next(),
    };
    const lead = await buildLead(settings, { stateDir, workspace, observer: output.observe, asker: ttyAskerIfInteractive() });
    let result: RunResult;
    try {
      output.start(info);
      result = await lead.runner.run(prompt, { idempotencyKey: info.idempotencyKey, signal: stop.signal });
    } finally {
      output.stopProgress();
      await lead.close();
    }
    // The runner knows it was interrupted; only we know why.
    if (result.subtype === "error_interrupted" && stop.reason !== undefined) {
      result = { ...result, result: `${stop.reason}: ${result.result}` };
    }
    await output.finish(result, info);
    return result;
  } finally {
    await lock.release();
  }
}
