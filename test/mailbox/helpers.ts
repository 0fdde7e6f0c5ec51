import * as fs from "node:fs";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import type { MailboxState } from "../../src/core/mailbox-state.ts";
import { createMessage, type MailboxMessage, type MessageKind } from "../../src/core/message.ts";
import { FileMailboxStore, type FileMailboxStoreOptions } from "../../src/mailbox/file-store.ts";
import type { FsOps } from "../../src/storage/fs-ops.ts";
import { tempDir } from "../support/temp-dir.ts";

export interface Fixture {
  stateDir: string;
  store: FileMailboxStore;
  clock: ManualClock;
  ids: SequentialIds;
  message(recipient: string, content?: string, options?: { sender?: string; kind?: MessageKind }): MailboxMessage;
  files(agent: string, state: MailboxState): string[];
  newStore(options?: Partial<FileMailboxStoreOptions>): FileMailboxStore;
}

export function fixture(options: Partial<FileMailboxStoreOptions> = {}): Fixture {
  const stateDir = tempDir("agent-mailbox-");
  const clock = new ManualClock("2026-03-01T12:00:00.000Z");
  const ids = new SequentialIds();
  const newStore = (more: Partial<FileMailboxStoreOptions> = {}) =>
    new FileMailboxStore({ stateDir, clock, ...options, ...more });
  return {
    stateDir,
    store: newStore(),
    clock,
    ids,
    newStore,
    message(recipient, content = "do the thing", { sender = "lead", kind = "task" } = {}) {
      clock.advance(1);
      return createMessage({ sender, recipient, kind, content }, { clock, ids });
    },
    files(agent, state) {
      try {
        return readdirSync(join(stateDir, "mailboxes", agent, state)).sort();
      } catch {
        return [];
      }
    },
  };
}

/**
 * The real fs, recording the files opened for reading (a message is read through
 * openSync, or readFileSync); directories are opened to be fsynced, not read.
 */
export function countingReads() {
  const read: string[] = [];
  const ops: FsOps = {
    ...fs,
    readFileSync: ((path: fs.PathOrFileDescriptor, options?: unknown) => {
      read.push(String(path));
      return fs.readFileSync(path, options as never);
    }) as typeof fs.readFileSync,
    openSync: ((path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      if (typeof flags !== "number" || (flags & fs.constants.O_DIRECTORY) === 0) read.push(String(path));
      return fs.openSync(path, flags ?? "r", mode);
    }) as typeof fs.openSync,
  };
  /** Message files only (not the index). */
  const messagesRead = () => read.filter((path) => path.endsWith(".json"));
  return { ops, read, messagesRead };
}
