/**
 * Typed errors with stable codes. Every error a user can cause is an `AgentError`
 * whose message is one line naming the cause and the fix; the CLI entry maps
 * `category` to an exit code and is the only place that prints them.
 */
export type ErrorCategory =
  | "usage" // bad flag, bad name, malformed id, bad config
  | "not_found" // unknown agent, unknown message
  | "busy" // state dir owned by another live runtime
  | "state" // corrupt state file, storage failure, conflicting data
  | "model" // model/API failures
  | "agent" // the agent's run ended in error
  | "interrupted" // the run was stopped by Ctrl-C (SIGINT)
  | "terminated"; // the run was stopped by SIGTERM

export abstract class AgentError extends Error {
  abstract readonly code: string;
  abstract readonly category: ErrorCategory;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UsageError extends AgentError {
  readonly code = "USAGE";
  readonly category = "usage" as const;
}

/** Ctrl-C a second time while the first was cancelling a turn of the interactive session: it ends, exit 130. */
export class SessionInterruptedError extends AgentError {
  readonly code = "SESSION_INTERRUPTED";
  readonly category = "interrupted" as const;

  constructor() {
    super("the session was interrupted (Ctrl-C twice); its history is kept: `agent --continue` goes on with it");
  }
}

export class InvalidAgentNameError extends AgentError {
  readonly code = "INVALID_AGENT_NAME";
  readonly category = "usage" as const;
  constructor(
    readonly agentName: string,
    readonly reason: string,
  ) {
    super(
      `invalid agent name ${JSON.stringify(agentName)}: ${reason}; use a lowercase slug like "alice" or "api-writer"`,
    );
  }
}

export class InvalidMessageIdError extends AgentError {
  readonly code = "INVALID_MESSAGE_ID";
  readonly category = "usage" as const;
  constructor(readonly messageId: string) {
    super(
      `invalid message id ${JSON.stringify(messageId)}: expected a canonical lowercase UUID such as 0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f`,
    );
  }
}

export class InvalidMessageError extends AgentError {
  readonly code = "INVALID_MESSAGE";
  readonly category = "usage" as const;
  constructor(readonly issues: string) {
    super(`invalid mailbox message: ${issues}`);
  }
}

export class MessageTooLargeError extends AgentError {
  readonly code = "MESSAGE_TOO_LARGE";
  readonly category = "usage" as const;
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `message content is ${bytes} bytes, over the mailbox cap of ${maxBytes} bytes (config mailbox.maxContentBytes); ` +
        "send less: put large data in a file and send its path",
    );
  }
}

export class UnknownAgentError extends AgentError {
  readonly code = "UNKNOWN_AGENT";
  readonly category = "not_found" as const;
  constructor(
    readonly agentName: string,
    hint = "run `agent mailbox list` to see the agents that have mailboxes",
  ) {
    super(`unknown agent "${agentName}": ${hint}`);
  }
}

export class MessageNotFoundError extends AgentError {
  readonly code = "MESSAGE_NOT_FOUND";
  readonly category = "not_found" as const;
  constructor(
    readonly messageId: string,
    where: string,
  ) {
    super(`message ${messageId} not found ${where}; run \`agent mailbox list\` to see where messages are`);
  }
}

/** Any failure of the durable mailbox: I/O, lock, conflicting or corrupt data. */
export class MailboxStorageError extends AgentError {
  readonly code: string = "MAILBOX_STORAGE";
  readonly category = "state" as const;
}

export class DuplicateMessageIdError extends MailboxStorageError {
  override readonly code = "DUPLICATE_MESSAGE_ID";
  constructor(readonly messageId: string) {
    super(`message id ${messageId} already exists in the mailbox store; every message needs a fresh id`);
  }
}

export class AckConflictError extends MailboxStorageError {
  override readonly code = "ACK_CONFLICT";
  constructor(readonly messageId: string) {
    super(
      `cannot ack message ${messageId}: done/ already holds a different message with this id; inspect it with \`agent mailbox show ${messageId}\``,
    );
  }
}

export class LockError extends AgentError {
  readonly code = "LOCK";
  readonly category = "state" as const;
  /** The lock could not be created because the state dir refuses writes. */
  readonly readOnly: boolean;
  constructor(message: string, options?: { cause?: unknown; readOnly?: boolean }) {
    super(message, options);
    this.readOnly = options?.readOnly ?? false;
  }
}

/** The state dir is owned by another live runtime. */
export class StateDirBusyError extends AgentError {
  readonly code = "STATE_DIR_BUSY";
  readonly category = "busy" as const;
  constructor(
    readonly stateDir: string,
    readonly owner: { pid: number; host: string } | undefined,
    fix: string,
  ) {
    const who = owner ? `owned by pid ${owner.pid} on host ${owner.host}` : "owned by another runtime";
    super(`state dir ${stateDir} is busy, ${who}; ${fix}`);
  }
}

/** A state file that exists but cannot be trusted. Never silently replaced. */
/** An append to an agent's history failed (disk full, I/O error); the file is back to its last whole record. */
export class HistoryWriteError extends AgentError {
  readonly code = "HISTORY_WRITE";
  readonly category = "state" as const;
  constructor(
    readonly path: string,
    cause: unknown,
    cutBack: boolean,
  ) {
    const code = (cause as { code?: unknown }).code;
    const what = typeof code === "string" ? code : (cause as Error).message;
    super(
      `could not append to the history ${path} (${what}); ` +
        (cutBack ? "it is back to its last whole record" : "its last record may be half-written and is cut off when next read") +
        "; free disk space (or fix the file system) and run again",
      { cause },
    );
  }
}

export class CorruptStateFileError extends AgentError {
  readonly code = "CORRUPT_STATE_FILE";
  readonly category = "state" as const;
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`corrupt state file ${path}: ${reason}; fix or move the file away, then retry`);
  }
}

/** Any failure talking to the model endpoint. */
export class ModelError extends AgentError {
  readonly code: string = "MODEL";
  readonly category = "model" as const;
}

/** No API key where one is needed. */
export class MissingApiKeyError extends ModelError {
  override readonly code = "MISSING_API_KEY";
  constructor(variable = "OPENAI_API_KEY") {
    super(
      `no API key: set ${variable} (or apiKey in ~/.config/agent/config.json); for a local endpoint that needs none (Ollama, llama.cpp) any value will do`,
    );
  }
}

/** The endpoint could not be reached, or kept failing after every retry. */
export class ModelUnavailableError extends ModelError {
  override readonly code = "MODEL_UNAVAILABLE";
}

/** The endpoint refused the request (bad key, unknown model, bad request). */
export class ModelRequestError extends ModelError {
  override readonly code: string = "MODEL_REQUEST";
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The endpoint says the model does not exist (a 404 whose body names the model). */
export class UnknownModelError extends ModelRequestError {
  override readonly code = "UNKNOWN_MODEL";
}

/** The key's quota is spent (429 `insufficient_quota`): waiting does not help, so it is never retried. */
export class QuotaExceededError extends ModelRequestError {
  override readonly code = "QUOTA_EXCEEDED";
}

/** A 200 that is not a chat completion, twice: usually a --base-url that points at something else. */
export class InvalidModelResponseError extends ModelError {
  override readonly code = "INVALID_MODEL_RESPONSE";
}

/** The model answered with no text and no tool calls, twice. */
export class EmptyModelAnswerError extends ModelError {
  override readonly code = "EMPTY_MODEL_ANSWER";
}

/**
 * The model refused to answer (Anthropic's `stop_reason: "refusal"`, its safety
 * classifiers stopping the stream): the same request is refused again, so it is
 * never retried and the run ends with it.
 */
export class ModelRefusalError extends ModelError {
  override readonly code = "MODEL_REFUSAL";
}

/** The request was longer than the model's context window. */
export class ContextOverflowError extends ModelError {
  override readonly code = "CONTEXT_OVERFLOW";
}

/** A --replay cassette has no answer for this request. */
export class CassetteMismatchError extends ModelError {
  override readonly code = "CASSETTE_MISMATCH";
}

/** A run that cannot go on: max turns reached, a hook stopped it, … (exit 1). */
export class AgentRunError extends AgentError {
  readonly code: string = "AGENT_RUN";
  readonly category = "agent" as const;
}

/** A configuration file or value that is not valid. */
export class ConfigError extends AgentError {
  readonly code = "CONFIG";
  readonly category = "usage" as const;
}

/**
 * The session's spend reached --max-budget-usd (or config maxBudgetUsd): no new
 * model call starts. Not a ModelError: the endpoint is fine, the run ends with
 * `error_budget` (exit 1) and what is unfinished waits for `agent drain`.
 */
export class BudgetExceededError extends AgentError {
  readonly code = "BUDGET_EXCEEDED";
  readonly category = "agent" as const;
  constructor(
    readonly spentUsd: number,
    readonly budgetUsd: number,
  ) {
    super(
      `the session has spent $${spentUsd.toFixed(4)} of its $${budgetUsd} budget (--max-budget-usd); raise the budget and run \`agent drain\` to go on`,
    );
  }
}

/** `--resume`/`--session` named no session of the state root. */
export class SessionNotFoundError extends AgentError {
  readonly code = "SESSION_NOT_FOUND";
  readonly category = "not_found" as const;
  constructor(
    readonly ref: string | undefined,
    readonly root: string,
  ) {
    super(
      ref === undefined
        ? `no session in ${root} yet; start one with \`agent run PROMPT\``
        : `no session ${JSON.stringify(ref)} in ${root}; run \`agent sessions list\` to see the sessions`,
    );
  }
}

/** A session id prefix or short id that more than one session matches. */
export class AmbiguousSessionError extends AgentError {
  readonly code = "AMBIGUOUS_SESSION";
  readonly category = "usage" as const;
  constructor(
    readonly ref: string,
    readonly candidates: string[],
  ) {
    super(`session id ${JSON.stringify(ref)} matches ${candidates.length} sessions (${candidates.join(", ")}); give more of the id, or the session's name`);
  }
}

/** The configured store (`--store`, AGENT_STORE, config `store`) cannot be reached or used. */
/**
 * The OS sandbox the settings ask for cannot start here, so a command that
 * would run in it is refused rather than run unsandboxed (fail closed).
 */
export class SandboxUnavailableError extends AgentError {
  readonly code = "SANDBOX_UNAVAILABLE";
  readonly category = "usage" as const;
}

export class StoreConnectionError extends AgentError {
  readonly code = "STORE_CONNECTION";
  readonly category = "state" as const;
}

/** The store's schema cannot be brought to the version this build needs. */
export class StoreMigrationError extends AgentError {
  readonly code = "STORE_MIGRATION";
  readonly category = "state" as const;
}

/**
 * An ack, release or quarantine from a claim whose lease is no longer current
 * (it expired, or the message was recovered or claimed again since): refused, so
 * a consumer that lost its lease never finishes another consumer's work.
 */
export class StaleLeaseError extends MailboxStorageError {
  override readonly code = "STALE_LEASE";
  constructor(
    readonly messageId: string,
    op: string,
  ) {
    super(
      `cannot ${op} ${messageId}: this claim's lease is no longer current (it expired, or the message was recovered or claimed again); ` +
        `the message's current holder finishes it — see it with \`agent mailbox show ${messageId}\``,
    );
  }
}
