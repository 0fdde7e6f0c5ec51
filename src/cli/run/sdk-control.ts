import { UsageError } from "../../core/errors.ts";
import { PERMISSION_MODES } from "../../config/modes.ts";
import type { PermissionMode } from "../../config/config.ts";
import type { PermissionAnswer, PermissionAsker } from "../../permissions/policy.ts";
import { inputLines, messageText } from "./stream-input.ts";

// The Claude Agent SDK's side of stdin and stdout (`--input-format stream-json
// --output-format stream-json`): its control messages in both directions,
// translated into what the run already knows — prompts, a permission question,
// hook answers, an interrupt of the turn, a mode or model for the next calls —
// so nothing behind the CLI learns which program drives it. The wire shapes are
// the SDK's published types (sdk.d.ts: SDKControlRequest, SDKControlResponse).

/** What the SDK's `initialize` request carries that the run acts on. */
export interface SdkInitialize {
  /** `systemPrompt` (the SDK sends a list; empty strings are no prompt). */
  systemPrompt?: string;
  appendSystemPrompt?: string;
  /** Hook callbacks per event: a matcher over tool names and the callbacks' ids. */
  hooks: Record<string, SdkHookMatcher[]>;
  /** The subagent definitions it sent, by name (not run here: docs/compat.md). */
  agents?: Record<string, unknown>;
}

export interface SdkHookMatcher {
  matcher?: string;
  hookCallbackIds: string[];
  /** Seconds. */
  timeout?: number;
}

/** What the runtime lets the SDK change while it runs: bound once the runtime is built. */
export interface SdkRuntimeControls {
  setPermissionMode(mode: PermissionMode): void;
  /** `undefined`: back to the model the command started with. */
  setModel(model: string | undefined): void;
}

type Write = (line: string) => void;

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
}

/** A request this process sent that the SDK answered with an error, or never answered (stdin closed, turn ended). */
export class SdkRequestError extends Error {
  override readonly name = "SdkRequestError";
}

/**
 * One SDK connection: reads stdin's lines (user messages, control requests and
 * the answers to ours) and writes control lines through `write`, the same
 * ordered stdout the run's messages use. Created by `open`, which reads the
 * first line before anything else is set up: `initialize` carries the system
 * prompt the settings need.
 */
export class SdkControl {
  readonly initialize: SdkInitialize | undefined;
  readonly #write: Write;
  readonly #lines: AsyncIterator<{ line: string; number: number }>;
  /** User messages read and not yet taken, and whoever waits for the next one. */
  readonly #prompts: string[] = [];
  #waiting: { resolve(value: IteratorResult<string>): void; reject(error: unknown): void } | undefined;
  #ended = false;
  #failure: unknown;
  readonly #pending = new Map<string, Pending>();
  #nextId = 0;
  #turn: AbortController | undefined;
  #interrupted = false;
  #controls: SdkRuntimeControls | undefined;
  /** A set_model or set_permission_mode that came before the runtime was built. */
  readonly #early: ((controls: SdkRuntimeControls) => void)[] = [];

  private constructor(write: Write, lines: AsyncIterator<{ line: string; number: number }>, initialize: SdkInitialize | undefined) {
    this.#write = write;
    this.#lines = lines;
    this.initialize = initialize;
  }

  /**
   * Reads stdin's first line: an `initialize` request is answered at once and
   * kept; anything else is the first of the lines the pump reads after it.
   */
  static async open(chunks: AsyncIterable<Uint8Array>, write: Write): Promise<SdkControl> {
    const lines = inputLines(chunks)[Symbol.asyncIterator]();
    const first = await lines.next();
    const parsed = first.done ? undefined : parseLine(first.value.line, first.value.number);
    const init = parsed && isControlRequest(parsed) && parsed.request.subtype === "initialize" ? parsed : undefined;
    const control = new SdkControl(write, lines, init ? initializeOf(init.request) : undefined);
    if (init) control.#respond(init.request_id, initializeResponse());
    else if (parsed !== undefined) control.#dispatch(parsed, first.value!.number);
    if (first.done) control.#end();
    else void control.#pump();
    return control;
  }

  /** Each user message's text, in order, until stdin ends. */
  prompts(): AsyncIterable<string> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          if (this.#prompts.length > 0) return Promise.resolve({ value: this.#prompts.shift()!, done: false });
          if (this.#failure !== undefined) return Promise.reject(this.#failure);
          if (this.#ended) return Promise.resolve({ value: undefined, done: true });
          return new Promise<IteratorResult<string>>((resolve, reject) => (this.#waiting = { resolve, reject }));
        },
      }),
    };
  }

  /** The signal of a new user turn, which the SDK's `interrupt` aborts (the run goes on to its next message). */
  turnSignal(): AbortSignal {
    this.#turn = new AbortController();
    this.#interrupted = false;
    return this.#turn.signal;
  }

  /** Whether the SDK interrupted the turn of the last `turnSignal`. */
  get interrupted(): boolean {
    return this.#interrupted;
  }

  /** The runtime is built: set_model and set_permission_mode apply to it (those that came earlier, now). */
  bind(controls: SdkRuntimeControls): void {
    this.#controls = controls;
    for (const apply of this.#early.splice(0)) apply(controls);
  }

  /** `--permission-prompt-tool stdio`: a question a person would be asked goes to the SDK as `can_use_tool`. */
  readonly asker: PermissionAsker = async (request, signal) => {
    const answer = await this.request(
      {
        subtype: "can_use_tool",
        tool_name: request.tool,
        input: typeof request.input === "object" && request.input !== null ? request.input : {},
        tool_use_id: request.callId ?? "",
        ...(request.why !== undefined ? { decision_reason: request.why } : {}),
        ...(request.subject !== "" ? { description: request.subject } : {}),
      },
      signal,
    );
    // Deny with `interrupt`: the SDK wants the whole turn stopped, not just this call.
    if (answer.behavior !== "allow" && answer.interrupt === true) this.#interrupt();
    return permissionAnswer(answer, request.tool);
  };

  #interrupt(): void {
    if (!this.#turn || this.#turn.signal.aborted) return;
    this.#interrupted = true;
    this.#turn.abort(new Error("interrupted by the SDK"));
  }

  /** Sends a control request of ours and resolves with the SDK's answer; rejects on its error, a closed stdin or `signal`. */
  request(request: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (this.#ended) return Promise.reject(new SdkRequestError(`cannot ask the SDK (${String(request.subtype)}): stdin is closed`));
    const id = `agent_${++this.#nextId}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(id);
        // The SDK stops waiting for its callback: sdk.d.ts SDKControlCancelRequest.
        this.#line({ type: "control_cancel_request", request_id: id });
        reject(new SdkRequestError(`${String(request.subtype)} was cancelled`));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
      });
      this.#line({ type: "control_request", request_id: id, request });
    });
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const next = await this.#lines.next();
        if (next.done) break;
        this.#dispatch(parseLine(next.value.line, next.value.number), next.value.number);
      }
    } catch (error) {
      this.#failure = error;
    }
    this.#end();
  }

  #end(): void {
    this.#ended = true;
    for (const pending of this.#pending.values()) pending.reject(new SdkRequestError("stdin closed before the SDK answered"));
    this.#pending.clear();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting && this.#failure !== undefined) waiting.reject(this.#failure);
    else waiting?.resolve({ value: undefined, done: true });
  }

  #dispatch(message: Record<string, unknown>, number: number): void {
    if (message.type === "control_response") return this.#answered(message.response);
    if (isControlRequest(message)) return this.#control(message.request_id, message.request);
    // The SDK withdrew a request of its own; none of ours waits on the SDK's requests.
    if (message.type === "control_cancel_request" || message.type === "keep_alive") return;
    const text = messageText(message, number);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting.resolve({ value: text, done: false });
    else this.#prompts.push(text);
  }

  #answered(response: unknown): void {
    const answer = (typeof response === "object" && response !== null ? response : {}) as Record<string, unknown>;
    const pending = typeof answer.request_id === "string" ? this.#pending.get(answer.request_id) : undefined;
    if (!pending) return;
    this.#pending.delete(answer.request_id as string);
    if (answer.subtype === "success") pending.resolve((answer.response ?? {}) as Record<string, unknown>);
    else pending.reject(new SdkRequestError(typeof answer.error === "string" ? answer.error : "the SDK answered with an error"));
  }

  #control(id: string, request: Record<string, unknown>): void {
    try {
      switch (request.subtype) {
        case "interrupt":
          this.#interrupt();
          return this.#respond(id, { still_queued: [] });
        case "set_permission_mode": {
          const mode = request.mode;
          if (!PERMISSION_MODES.includes(mode as PermissionMode)) {
            throw new UsageError(`permission mode ${JSON.stringify(mode)} is not supported; use one of ${PERMISSION_MODES.join(", ")}`);
          }
          this.#apply((controls) => controls.setPermissionMode(mode as PermissionMode));
          return this.#respond(id, { mode });
        }
        case "set_model": {
          const model = typeof request.model === "string" && request.model !== "default" && request.model.trim() !== "" ? request.model : undefined;
          this.#apply((controls) => controls.setModel(model));
          return this.#respond(id, {});
        }
        case "initialize":
          // A repeated initialize: its hooks and prompts cannot change a running session.
          return this.#respond(id, { ...initializeResponse(), hooks_applied: false });
        default:
          throw new UsageError(`agent does not support the control request ${JSON.stringify(request.subtype)} (docs/compat.md lists those it does)`);
      }
    } catch (error) {
      this.#line({ type: "control_response", response: { subtype: "error", request_id: id, error: (error as Error).message } });
    }
  }

  #apply(change: (controls: SdkRuntimeControls) => void): void {
    if (this.#controls) change(this.#controls);
    else this.#early.push(change);
  }

  #respond(id: string, response: Record<string, unknown>): void {
    this.#line({ type: "control_response", response: { subtype: "success", request_id: id, response } });
  }

  #line(value: unknown): void {
    this.#write(`${JSON.stringify(value)}\n`);
  }
}

function parseLine(line: string, number: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new UsageError(`--input-format stream-json: stdin line ${number} is not JSON (${(error as Error).message}); send one JSON object per line`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`--input-format stream-json: stdin line ${number} is not a JSON object; send {"type":"user",...} or {"type":"control_request",...} lines`);
  }
  return value as Record<string, unknown>;
}

function isControlRequest(message: Record<string, unknown>): message is { type: "control_request"; request_id: string; request: Record<string, unknown> } {
  return message.type === "control_request" && typeof message.request_id === "string" && typeof message.request === "object" && message.request !== null;
}

function initializeOf(request: Record<string, unknown>): SdkInitialize {
  const prompt = Array.isArray(request.systemPrompt) ? request.systemPrompt.filter((part) => typeof part === "string").join("\n\n") : request.systemPrompt;
  const hooks: Record<string, SdkHookMatcher[]> = {};
  if (typeof request.hooks === "object" && request.hooks !== null) {
    for (const [event, list] of Object.entries(request.hooks as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      hooks[event] = list
        .filter((entry): entry is Record<string, unknown> => typeof entry === "object" && entry !== null && Array.isArray((entry as { hookCallbackIds?: unknown }).hookCallbackIds))
        .map((entry) => ({
          ...(typeof entry.matcher === "string" ? { matcher: entry.matcher } : {}),
          hookCallbackIds: (entry.hookCallbackIds as unknown[]).filter((id): id is string => typeof id === "string"),
          ...(typeof entry.timeout === "number" ? { timeout: entry.timeout } : {}),
        }));
    }
  }
  return {
    ...(typeof prompt === "string" && prompt.trim() !== "" ? { systemPrompt: prompt } : {}),
    ...(typeof request.appendSystemPrompt === "string" && request.appendSystemPrompt.trim() !== "" ? { appendSystemPrompt: request.appendSystemPrompt } : {}),
    hooks,
    ...(typeof request.agents === "object" && request.agents !== null ? { agents: request.agents as Record<string, unknown> } : {}),
  };
}

/** The answer to `initialize` (sdk.d.ts SDKControlInitializeResponse): what this process offers the SDK's UI. */
function initializeResponse(): Record<string, unknown> {
  return { commands: [], agents: [], output_style: "default", available_output_styles: ["default"], models: [], account: {}, hooks_applied: true };
}

/** The SDK's PermissionResult as our answer: allow (with its updatedInput) or deny with its message. */
function permissionAnswer(answer: Record<string, unknown>, tool: string): PermissionAnswer {
  if (answer.behavior === "allow") {
    return { answer: "yes", ...(typeof answer.updatedInput === "object" && answer.updatedInput !== null ? { input: answer.updatedInput } : {}) };
  }
  const message = typeof answer.message === "string" && answer.message.trim() !== "" ? answer.message : `the SDK's canUseTool denied ${tool}`;
  return { answer: "denied", reason: message };
}
