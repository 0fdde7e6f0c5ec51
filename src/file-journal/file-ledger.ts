import type { Stats } from "node:fs";
import type { Clock } from "../core/clock.ts";
import { AgentError } from "../core/errors.ts";
import type { ScannedFile } from "./workspace-scan.ts";
import { type ContentRef, DEFAULT_JOURNAL_MAX_BYTES, DEFAULT_SHELL_SCAN_MAX_FILES, type FileJournalBackend, type FileVersion, type JournalEntry, type NumberedEntry } from "./journal-records.ts";
import { maskedSecrets } from "../security/redact.ts";
import { changedRegion, formatRegion, regionLines } from "./line-diff.ts";


export interface FileLedgerOptions {
  backend: FileJournalBackend;
  clock: Clock;
  maxBlobBytes?: number;
  /** A workspace with more files is not scanned around shell commands (config `files.shellScanMaxFiles`). */
  shellScanMaxFiles?: number;
}

/** Who made a change and how, as the journal records it. */
export interface ChangeMeta {
  agent: string;
  kind: JournalEntry["kind"];
  turn?: string;
  tool?: string;
  call?: string;
}

export function contentHash(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/**
 * A session's memory of the user's files: which version of each file every
 * agent last read or wrote, and a journal of every change the agents made,
 * with the content before it. File-changing tools ask it before writing and
 * tell it after; `agent changes` and `agent rewind` read it. See docs/files.md.
 */
export class FileLedger {
  readonly #o: FileLedgerOptions;
  readonly #max: number;
  readonly #versions = new Map<string, Promise<Map<string, FileVersion>>>();

  constructor(options: FileLedgerOptions) {
    this.#o = options;
    this.#max = options.maxBlobBytes ?? DEFAULT_JOURNAL_MAX_BYTES;
  }

  get backend(): FileJournalBackend {
    return this.#o.backend;
  }

  /** `agent` is about to work: its store of versions gets ready for its first read, off that read's path. */
  expect(agent: string): void {
    this.#o.backend.expect?.(agent);
  }

  get shellScanMaxFiles(): number {
    return this.#o.shellScanMaxFiles ?? DEFAULT_SHELL_SCAN_MAX_FILES;
  }

  /**
   * Journals what a shell command of `meta.agent` changed, from the workspace's
   * scans around it: each path's content after (read now), and before only where
   * the agent had seen the file exactly as the scan found it (same size and
   * mtime) — otherwise the entry says the earlier content is not known.
   */
  async journalShell(meta: ChangeMeta, paths: readonly string[], before: Map<string, ScannedFile>, after: Map<string, ScannedFile>, read: (path: string) => Buffer | undefined): Promise<void> {
    const mine = await this.#mine(meta.agent);
    for (const path of paths) {
      const then = before.get(path);
      let beforeRef: ContentRef = null;
      if (then) {
        const seen = mine.get(path);
        beforeRef =
          seen && seen.size === then.size && seen.mtimeMs === then.mtimeMs
            ? { hash: seen.hash, size: seen.size, stored: await this.#o.backend.hasBlob(seen.hash, seen.size) }
            : { hash: "", size: then.size, stored: false, known: false };
      }
      const bytes = after.has(path) ? read(path) : undefined;
      const afterRef = bytes === undefined ? null : await this.#keep(bytes);
      await this.#o.backend.append({ v: 1, at: this.#o.clock.now().toISOString(), path, ...entryMeta(meta), before: beforeRef, after: afterRef });
    }
  }

  #mine(agent: string): Promise<Map<string, FileVersion>> {
    let versions = this.#versions.get(agent);
    if (!versions) {
      versions = this.#o.backend.versions(agent);
      this.#versions.set(agent, versions);
    }
    return versions;
  }

  /** Remembers that `agent` saw `bytes` as the content of `path` (a read, or its own write), and keeps the content. */
  async saw(agent: string, path: string, bytes: Uint8Array, stat: Stats | undefined, hash = contentHash(bytes)): Promise<void> {
    const version: FileVersion = { size: bytes.length, mtimeMs: stat?.mtimeMs ?? 0, hash };
    const mine = await this.#mine(agent);
    const known = mine.get(path);
    if (known && known.hash === version.hash && known.mtimeMs === version.mtimeMs) return;
    mine.set(path, version);
    // Kept (unsynced), so a later change by a shell command or from outside can be shown as a diff and rewound.
    await this.#keep(bytes, hash);
    await this.#o.backend.remember(agent, path, version);
  }

  /**
   * Refuses a write by `agent` over `path`, whose content is `current`, unless
   * the agent read or wrote exactly that content in this session. A new file
   * (`current` undefined) needs no read. Returns the content's hash.
   */
  async assertCurrent(agent: string, tool: string, path: string, current: Buffer | undefined): Promise<string | undefined> {
    if (current === undefined) return undefined;
    const hash = contentHash(current);
    const known = (await this.#mine(agent)).get(path);
    if (known?.hash === hash) return hash;
    const last = await this.#o.backend.lastFor(path);
    if (!known) throw new UnreadFileError(tool, path, last && last.agent !== agent && last.after?.hash === hash ? last.agent : undefined);
    const who = changer(last, agent, hash);
    const read = await this.#o.backend.blob(known.hash);
    const region = read ? changedRegion(read.toString("utf8"), current.toString("utf8")) : undefined;
    throw new StaleWriteError(tool, path, who, region ? `${regionLines(region)}` : undefined, region ? formatRegion(region) : undefined);
  }

  /**
   * Journals a change of `path` from `before` (undefined: no file) to `after`,
   * durably, before it is made: the content before is stored and synced (unless
   * over the size cap), the entry appended and synced. The content after is kept
   * too (in the background), so a later change by something outside the agents
   * can be shown as a diff and the next change finds it durable. The syncs are
   * started together and committed together, and the caller's write syncs its
   * own file meanwhile.
   */
  async journal(meta: ChangeMeta, path: string, before: Uint8Array | undefined, after: Uint8Array | undefined, hashes: { before?: string; after?: string } = {}): Promise<void> {
    const beforeRef = before === undefined ? null : this.#ref(before, hashes.before);
    const afterRef = after === undefined ? null : this.#ref(after, hashes.after);
    const entry: JournalEntry = { v: 1, at: this.#o.clock.now().toISOString(), path, ...entryMeta(meta), before: beforeRef, after: afterRef };
    await Promise.all([
      // Usually stored already (an earlier change left it, or the agent read it): then synced, unless that is done.
      beforeRef?.stored ? this.#o.backend.putBlob(beforeRef.hash, before!, "now") : undefined,
      this.#o.backend.append(entry),
      // The next change's content before: stored and synced in the background, off this write's path.
      afterRef?.stored ? this.#o.backend.putBlob(afterRef.hash, after!, "soon") : undefined,
    ]);
  }

  /** How the journal names `bytes`: stored, unless over the size cap or holding a secret. */
  #ref(bytes: Uint8Array, known?: string): NonNullable<ContentRef> {
    const hash = known ?? contentHash(bytes);
    if (bytes.length > this.#max) return { hash, size: bytes.length, stored: false };
    // The state must hold no secret (docs/security.md): a file holding the API key or a
    // configured credential is journaled by hash only, like an oversized one.
    if (holdsSecret(bytes)) return { hash, size: bytes.length, stored: false, secret: true };
    return { hash, size: bytes.length, stored: true };
  }

  /** Keeps `bytes` unsynced under `hash` unless stored already. */
  async #store(hash: string, bytes: Uint8Array): Promise<void> {
    if (!(await this.#o.backend.hasBlob(hash, bytes.length))) await this.#o.backend.putBlob(hash, bytes, "none");
  }

  async #keep(bytes: Uint8Array, known?: string): Promise<ContentRef> {
    const ref = this.#ref(bytes, known);
    if (ref.stored) await this.#store(ref.hash, bytes);
    return ref;
  }

  entries(): Promise<NumberedEntry[]> {
    return this.#o.backend.entries();
  }
}

function holdsSecret(bytes: Uint8Array): boolean {
  const secrets = maskedSecrets();
  if (secrets.length === 0) return false;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return secrets.some((secret) => buffer.includes(secret));
}

function entryMeta(meta: ChangeMeta): Pick<JournalEntry, "agent" | "kind" | "turn" | "tool" | "call"> {
  return {
    agent: meta.agent,
    kind: meta.kind,
    ...(meta.turn !== undefined ? { turn: meta.turn } : {}),
    ...(meta.tool !== undefined ? { tool: meta.tool } : {}),
    ...(meta.call !== undefined ? { call: meta.call } : {}),
  };
}

/** Who left `path` with the content `hash`, in words, from the newest journal entry of the path. */
function changer(last: NumberedEntry | undefined, agent: string, hash: string): string {
  if (!last || last.after?.hash !== hash) return "something outside the agents (an editor, git, a process no agent ran)";
  if (last.kind === "rewind") return "agent rewind";
  if (last.kind === "shell") return last.agent === agent ? "your own shell command" : `a shell command of ${last.agent}`;
  return last.agent === agent ? "you, in another turn" : last.agent;
}

/** A write over a file the agent never read in this session. */
export class UnreadFileError extends AgentError {
  readonly code = "FILE_NOT_READ";
  readonly category = "usage" as const;
  constructor(tool: string, path: string, writer: string | undefined) {
    super(
      `${tool} refused: ${path} exists and you have not read it in this session${writer ? ` (${writer} wrote it)` : ""}; ` +
        "read_file it first, then make your change",
    );
  }
}

/** A write over a file changed since the agent read it: says who changed it and how. */
export class StaleWriteError extends AgentError {
  readonly code = "STALE_WRITE";
  readonly category = "usage" as const;
  constructor(tool: string, path: string, who: string, where: string | undefined, diff: string | undefined) {
    super(
      `${tool} refused: ${path} changed after you read it: ${who} changed ${where ?? "it"}; ` +
        "read_file it again and redo your change on the current content" +
        (diff ? `\n${diff}` : ""),
    );
  }
}
