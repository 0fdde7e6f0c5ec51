import { z } from "zod";
import { UtcInstant } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** Contents over this size are journaled by hash only (config `files.journalMaxBytes`). */
export const DEFAULT_JOURNAL_MAX_BYTES = 1024 * 1024;
/** A workspace with more files than this is not scanned around shell commands (config `files.shellScanMaxFiles`). */
export const DEFAULT_SHELL_SCAN_MAX_FILES = 20_000;

/** What an agent last saw of a file: enough to tell, later, whether it changed since. */
export const FileVersion = lazySchema(() =>
  z.strictObject({
    size: z.number().int().nonnegative(),
    mtimeMs: z.number(),
    /** sha256 of the content, hex. */
    hash: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);
export type FileVersion = z.infer<typeof FileVersion>;

/** One line of an agent's versions: the path (relative to the workspace) and what it read or wrote there. */
export const VersionRecord = lazySchema(() => z.strictObject({ path: z.string().min(1), version: FileVersion }));
export type VersionRecord = z.infer<typeof VersionRecord>;

/** A file's content at one end of a change; null: no file there. */
export const ContentRef = lazySchema(() =>
  z
    .strictObject({
      /** Empty when the content is not known (`known: false`). */
      hash: z.string().regex(/^([0-9a-f]{64})?$/),
      size: z.number().int().nonnegative(),
      /** False when the content was over the journal's size cap, or held a secret: known by hash only, not restorable. */
      stored: z.boolean(),
      /** True when the content held a registered secret (the API key, a configured credential) and was kept out of the state. */
      secret: z.literal(true).optional(),
      /**
       * False for the content a shell command overwrote when no agent had seen it
       * as it was: the journal knows a change happened, not what was there.
       */
      known: z.literal(false).optional(),
    })
    .nullable(),
);
export type ContentRef = z.infer<typeof ContentRef>;

/**
 * One change to a workspace file, appended before the change is made: who
 * (`agent`), in which turn (`turn`, the history's turn key), by which tool
 * call, and the content before and after (by hash; the bytes are blobs).
 */
export const JournalEntry = lazySchema(() =>
  z.strictObject({
    v: z.literal(1),
    at: UtcInstant,
    path: z.string().min(1),
    agent: z.string().min(1),
    /** `tool`: write_file/edit_file; `shell`: a shell command's effect seen after it ran; `rewind`: agent rewind. */
    kind: z.enum(["tool", "shell", "rewind"]),
    turn: z.string().optional(),
    tool: z.string().optional(),
    call: z.string().optional(),
    before: ContentRef,
    after: ContentRef,
  }),
);
export type JournalEntry = z.infer<typeof JournalEntry>;

/** A journal entry with its place in the session's journal (1, 2, …). */
export type NumberedEntry = JournalEntry & { seq: number };

/**
 * How soon a stored content must be durable: "now", before putBlob returns (a
 * change's content before, which must survive a crash once the file is
 * replaced); "soon", in the background — putBlob returns at once (a change's
 * content after, which the next change of the file will need "now"); "none" (a
 * content an agent read: lost to a crash, it only costs a diff).
 */
export type BlobSync = "now" | "soon" | "none";

/**
 * Where a session keeps its file versions, journal and the contents the
 * journal names (files under the state dir, or PostgreSQL rows).
 */
export interface FileJournalBackend {
  /** Every path `agent` read or wrote, with the version it saw last. */
  versions(agent: string): Promise<Map<string, FileVersion>>;
  /** Remembers that `agent` saw `version` of `path`. */
  remember(agent: string, path: string, version: FileVersion): Promise<void>;
  /** `agent` may read files soon: what its first remember needs is made now, in the background (files: its version file). */
  expect?(agent: string): void;
  /** Whether the content `hash` of `size` bytes is stored. */
  hasBlob(hash: string, size: number): Promise<boolean>;
  /**
   * Stores `bytes` under their hash unless stored, made durable as `sync` says
   * (a copy stored earlier without a sync is synced by "now" and "soon").
   */
  putBlob(hash: string, bytes: Uint8Array, sync: BlobSync): Promise<void>;
  blob(hash: string): Promise<Buffer | undefined>;
  /** Appends `entry` durably; returns its number. */
  append(entry: JournalEntry): Promise<number>;
  /** The journal, oldest first. */
  entries(): Promise<NumberedEntry[]>;
  /** The newest entry for `path`. */
  lastFor(path: string): Promise<NumberedEntry | undefined>;
}
