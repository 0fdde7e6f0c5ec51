import { closeSync, constants, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { z } from "zod";
import { CassetteMismatchError, CorruptStateFileError, UsageError } from "../core/errors.ts";
import { normaliseVolatileSections } from "../core/prompt-sections.ts";
import { FILE_MODE, isErrno } from "../storage/atomic-file.ts";
import { redactValue } from "../security/redact.ts";
import { ChatMessage, FINISH_REASONS, type ModelClient, type ModelRequest, type ModelResponse, Usage, tellWhole } from "./types.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * A cassette is a JSONL file, one line per answered model request, so a run can
 * be recorded against a real endpoint once (`--record`) and replayed offline
 * (`--replay`) in CI, demos and the README's quick start.
 *
 * Only tool *names* are recorded: a reworded description or schema does not
 * invalidate a cassette, a different tool set does.
 */
export const CassetteRequest = lazySchema(() =>
  z.strictObject({
    identity: z.string(),
    messages: z.array(ChatMessage),
    tools: z.array(z.string()),
  }),
);
export type CassetteRequest = z.infer<typeof CassetteRequest>;

const AssistantReply = lazySchema(() =>
  ChatMessage.transform((message, context) => {
    if (message.role === "assistant") return message;
    context.addIssue({ code: "custom", message: `a response must be an assistant message, not ${message.role}` });
    return z.NEVER;
  }),
);

export const CassetteResponse = lazySchema(() =>
  z.strictObject({
    message: AssistantReply,
    finishReason: z.enum(FINISH_REASONS),
    usage: Usage,
  }),
);

export const CassetteEntry = lazySchema(() =>
  z.strictObject({
    v: z.literal(1),
    request: CassetteRequest,
    response: CassetteResponse,
  }),
);
export type CassetteEntry = z.infer<typeof CassetteEntry>;

/**
 * What a cassette holds of a request, and what replay compares: the system
 * prompt's environment section (date, git branch) is volatile, so both sides
 * carry a placeholder instead and a cassette replays on any day, in any repo.
 */
export function cassetteRequest(request: ModelRequest): CassetteRequest {
  return {
    identity: request.identity,
    messages: request.messages.map((message) =>
      message.role === "system" ? { ...message, content: normaliseVolatileSections(message.content) } : message,
    ),
    tools: request.tools.map((tool) => tool.name),
  };
}

/** Passes every request to `inner` and appends each answered one to the cassette. */
export class RecordingModelClient implements ModelClient {
  readonly model: string;
  readonly #fd: number;

  /** Opens (creating, 0600) the cassette now, so a bad --record path fails before any model call. */
  constructor(
    readonly inner: ModelClient,
    readonly path: string,
  ) {
    this.model = inner.model;
    try {
      this.#fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, FILE_MODE);
    } catch (error) {
      throw new UsageError(`cannot open the cassette ${path} for recording (${(error as Error).message}): check --record`, {
        cause: error,
      });
    }
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const response = await this.inner.complete(request);
    // Parsed on the way out so a line that could not be replayed is caught while recording.
    // Masked as every file the run writes is: a cassette is meant to be committed and shared.
    const entry = CassetteEntry.parse(redactValue({ v: 1, request: cassetteRequest(request), response }));
    // One write of one whole line with O_APPEND: concurrent agents never interleave
    // inside a line, and fsync means a recorded answer survives a crash of the run.
    const bytes = Buffer.from(`${JSON.stringify(entry)}\n`, "utf8");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
    fsyncSync(this.#fd);
    return response;
  }

  async close(): Promise<void> {
    try {
      closeSync(this.#fd);
    } finally {
      await this.inner.close();
    }
  }
}

/**
 * Answers from a cassette, with no network. Agents run concurrently, so their
 * requests may interleave differently than when recording: the Nth request of an
 * agent gets the Nth entry recorded for that agent (its identity), and only when
 * it is the same request.
 */
export class ReplayModelClient implements ModelClient {
  readonly #byIdentity = new Map<string, CassetteEntry[]>();
  readonly #served = new Map<string, number>();

  constructor(
    readonly path: string,
    readonly model: string,
  ) {
    for (const entry of readCassette(path)) {
      const list = this.#byIdentity.get(entry.request.identity) ?? [];
      list.push(entry);
      this.#byIdentity.set(entry.request.identity, list);
    }
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    request.signal?.throwIfAborted();
    const { identity } = request;
    const recorded = this.#byIdentity.get(identity) ?? [];
    const index = this.#served.get(identity) ?? 0;
    const which = `request ${index + 1} from ${identity}`;
    const entry = recorded[index];
    if (!entry) {
      throw new CassetteMismatchError(
        `${which} is past the end of the cassette ${this.path} (it holds ${recorded.length} for ${identity}); re-record it with --record`,
      );
    }
    // Compared as recorded: masked, so a request carrying a registered secret still matches.
    const difference = firstDifference(canonical(entry.request), canonical(redactValue(cassetteRequest(request))), "request");
    if (difference) {
      throw new CassetteMismatchError(
        `${which} does not match the cassette ${this.path} (first difference: ${difference}); re-record it with --record`,
      );
    }
    this.#served.set(identity, index + 1);
    // Told at once, as an endpoint that does not stream would: a terminal still shows the answer.
    tellWhole(request, entry.response.message);
    return structuredClone(entry.response);
  }

  async close(): Promise<void> {}
}

/** Every line validated; a bad one is reported as file:line, never skipped. */
export function readCassette(path: string): CassetteEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) throw new UsageError(`cassette ${path} not found: check --replay`);
    throw new UsageError(`cannot read the cassette ${path} (${(error as Error).message}): check --replay`, { cause: error });
  }
  const entries: CassetteEntry[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `${path}:${index + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CorruptStateFileError(where, "not valid JSON (a cassette holds one JSON object per line)");
    }
    const parsed = CassetteEntry.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CorruptStateFileError(where, `not a cassette entry (${issue?.path.join(".") || "entry"}: ${issue?.message})`);
    }
    entries.push(parsed.data);
  });
  return entries;
}

/** JSON with undefined fields dropped, so an absent optional field equals a missing one. */
function canonical(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** The first path where two JSON values differ, with both sides shortened; undefined when equal. */
export function firstDifference(recorded: unknown, actual: unknown, path: string): string | undefined {
  if (Array.isArray(recorded) && Array.isArray(actual)) {
    for (let i = 0; i < Math.min(recorded.length, actual.length); i += 1) {
      const found = firstDifference(recorded[i], actual[i], `${path}[${i}]`);
      if (found) return found;
    }
    if (recorded.length === actual.length) return undefined;
    return `${path} has ${actual.length} items, the cassette ${recorded.length}`;
  }
  if (isObject(recorded) && isObject(actual)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(actual)])].sort();
    for (const key of keys) {
      const found = firstDifference(recorded[key], actual[key], `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  if (recorded === actual) return undefined;
  return `${path} is ${preview(actual)}, the cassette has ${preview(recorded)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(value: unknown): string {
  if (value === undefined) return "absent";
  const text = JSON.stringify(value).replace(/\s+/g, " ");
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
