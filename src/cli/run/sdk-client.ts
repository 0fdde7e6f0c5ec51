import { UsageError } from "../../core/errors.ts";
import { writeOut } from "../output.ts";
import type { CompatValues } from "./compat-flags.ts";
import type { HeadlessClient } from "./headless.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import { SdkControl, type SdkInitialize } from "./sdk-control.ts";
import { SdkHooks } from "./sdk-hooks.ts";

/** The Claude Agent SDK driving `agent run`: its connection, and what it changes in the run's frame. */
export interface SdkClient {
  control: SdkControl;
  /** The frame's part (runHeadless): stdout shared with the control lines, the asker, the hooks. */
  frame(model: string): HeadlessClient;
}

/**
 * With stream-json in and out in Claude Code's shapes (how the SDK starts
 * `claude`), stdin is the SDK's: its first line is read now. Otherwise none.
 */
export async function sdkClient(args: CompatValues & { output?: string }): Promise<SdkClient | undefined> {
  const prompter = args["permission-prompt-tool"];
  if (prompter !== undefined && prompter !== "stdio") {
    throw new UsageError(`--permission-prompt-tool ${prompter}: only stdio is supported (the SDK's canUseTool); an MCP tool as the prompt is not`);
  }
  if (args["input-format"] !== "stream-json" || args["output-format"] !== "stream-json") return undefined;
  const stdout = new OrderedWriter(writeOut);
  const control = await SdkControl.open(Bun.stdin.stream(), (line) => stdout.write(line));
  const hooks = control.initialize?.hooks ?? {};
  return {
    control,
    frame: (model) => ({
      stdout: async (text) => {
        stdout.write(text);
        await stdout.flush();
      },
      ...(prompter === "stdio" ? { asker: control.asker } : {}),
      ...(Object.keys(hooks).length > 0 ? { hostHooks: (session) => new SdkHooks(control, hooks, session) } : {}),
      started: (lead) =>
        control.bind({
          setPermissionMode: (mode) => lead.policy.setMode(mode),
          setModel: (name) => lead.modelChoice.use(name ?? model),
        }),
      eachTurnReported: true,
    }),
  };
}

/** The command line's values with the initialize request's prompts where the line gives none. */
export function withInitialize<T extends CompatValues & { "append-system-prompt"?: string }>(args: T, init: SdkInitialize | undefined): T {
  if (!init) return args;
  return {
    ...args,
    ...(args["system-prompt"] === undefined && init.systemPrompt !== undefined ? { "system-prompt": init.systemPrompt } : {}),
    ...(args["append-system-prompt"] === undefined && init.appendSystemPrompt !== undefined ? { "append-system-prompt": init.appendSystemPrompt } : {}),
  };
}
