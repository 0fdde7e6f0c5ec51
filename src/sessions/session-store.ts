import { lstatSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type Clock, systemClock } from "../core/clock.ts";
import { AmbiguousSessionError, CorruptStateFileError, SessionNotFoundError, StateDirBusyError } from "../core/errors.ts";
import { type IdSource, uuidV7Source } from "../core/ids.ts";
import { ensureDir, fsyncDir, namesIn } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import type { RuntimeLock } from "../storage/runtime-lock.ts";
import { ForeignSessionError, StateRootRedirectedError } from "./session-errors.ts";
import { SessionMarker } from "./session-marker.ts";
import { idMatches } from "./short-id.ts";
import { SESSION_FILE, type SessionMeta, clipFirstPrompt, readSessionMeta, writeSessionMeta, writeSessionMetaOffLoop } from "./session-meta.ts";

/**
 * The sessions of one state root: `<root>/sessions/<id>/`, each a complete state
 * dir (histories, team, mailboxes, tasks, todos, cron, tool results, runtime lock)
 * with a `session.json` saying who it is. A session's directory appears whole or
 * not at all (built under a temp name, then renamed), so every directory listed
 * has its metadata. Every session it creates carries this user's marker; the
 * ones without it are listed but foreign (session-marker.ts).
 */
export class SessionStore {
  readonly dir: string;
  readonly #clock: Clock;
  readonly #ids: IdSource;
  readonly marker: SessionMarker;

  constructor(
    readonly root: string,
    options: { clock?: Clock; ids?: IdSource; marker?: SessionMarker } = {},
  ) {
    this.dir = join(root, "sessions");
    this.#clock = options.clock ?? systemClock;
    this.#ids = options.ids ?? uuidV7Source;
    this.marker = options.marker ?? SessionMarker.forUser();
  }

  dirOf(id: string): string {
    return join(this.dir, id);
  }

  /** Every session, this user's and foreign ones, most recently used first. */
  list(): SessionMeta[] {
    return this.survey().sessions;
  }

  /**
   * Every session, and the ones whose session.json cannot be read: one corrupt
   * file (a crash of an older version, a hand edit, a planted directory) hides
   * that session only, never the others from `sessions list`, `drain` or `--resume`.
   */
  survey(): { sessions: SessionMeta[]; unreadable: CorruptStateFileError[] } {
    const sessions: SessionMeta[] = [];
    const unreadable: CorruptStateFileError[] = [];
    for (const name of namesIn(this.dir)) {
      // Temp names of sessions being built or removed.
      if (name.startsWith(".")) continue;
      try {
        const meta = readSessionMeta(join(this.dir, name));
        if (meta !== undefined) sessions.push(meta);
      } catch (error) {
        if (!(error instanceof CorruptStateFileError)) throw error;
        unreadable.push(error);
      }
    }
    return { sessions: sessions.sort(byRecentUse), unreadable };
  }

  /** This user's own sessions (with a valid marker), most recently used first. */
  own(): SessionMeta[] {
    return this.list().filter((meta) => this.owns(meta));
  }

  owns(meta: SessionMeta): boolean {
    return this.marker.owns(meta);
  }

  /** The session, if it is this user's own; a foreign one is ForeignSessionError (exit 5). */
  requireOwn(meta: SessionMeta): SessionMeta {
    if (!this.owns(meta)) throw new ForeignSessionError(meta.id);
    return meta;
  }

  /** The most recently used of this user's own sessions: a foreign one is never taken by default. */
  mostRecent(): SessionMeta | undefined {
    return this.own()[0];
  }

  /**
   * The session `ref` names: its name, its id, a prefix of exactly one id, or its
   * short id (short-id.ts). Unknown is SessionNotFoundError (exit 6); a ref
   * matching several ids is AmbiguousSessionError (exit 2) listing them.
   */
  find(ref: string): SessionMeta {
    const { sessions, unreadable } = this.survey();
    const named = sessions.find((session) => session.name === ref);
    if (named) return named;
    const wanted = ref.toLowerCase();
    const matches = wanted.length === 0 ? [] : sessions.filter((session) => idMatches(session.id, wanted));
    if (matches.length === 1) return matches[0] as SessionMeta;
    if (matches.length === 0) {
      // The session asked for is there, but its metadata cannot be read: say so, not "not found".
      const corrupt = unreadable.find((error) => wanted.length > 0 && idMatches(basename(dirname(error.path)), wanted));
      throw corrupt ?? new SessionNotFoundError(ref, this.root);
    }
    const exact = matches.find((session) => session.id === wanted);
    if (exact) return exact;
    throw new AmbiguousSessionError(ref, matches.map((session) => session.id).sort());
  }

  /** The session named `name`, if there is one. */
  named(name: string): SessionMeta | undefined {
    return this.list().find((session) => session.name === name);
  }

  /** A new unnamed session; with `id` (claude's `--session-id`), that id instead of a fresh one. */
  create(id?: string): SessionMeta {
    ensureDir(this.dir);
    return this.#build(undefined, id);
  }

  /**
   * The session named `name`, created if there is none: under a lock, so two runs
   * starting `--session ci-42` at once get the same one.
   */
  async createNamed(name: string): Promise<SessionMeta> {
    ensureDir(this.dir);
    return withFileLock(join(this.root, "sessions.lock"), () => this.named(name) ?? this.#build(name));
  }

  /** Marks the session used now (and records its first prompt once); call while holding its runtime lock. */
  touch(meta: SessionMeta, prompt?: string): SessionMeta {
    const updated = this.#touched(meta, prompt);
    writeSessionMeta(this.dirOf(meta.id), updated);
    return updated;
  }

  /**
   * touch with the fsyncs off the event loop (a run's first prompt is recorded
   * while its model request goes out): `written` settles once the file is
   * replaced. One at a time per session: a later write must not be overtaken.
   */
  touchOffLoop(meta: SessionMeta, prompt?: string): { updated: SessionMeta; written: Promise<void> } {
    const updated = this.#touched(meta, prompt);
    return { updated, written: writeSessionMetaOffLoop(this.dirOf(meta.id), updated) };
  }

  #touched(meta: SessionMeta, prompt: string | undefined): SessionMeta {
    const updated: SessionMeta = { ...meta, lastUsedAtUtc: this.#clock.now().toISOString() };
    if (updated.firstPrompt === undefined && prompt !== undefined && prompt.trim().length > 0) {
      updated.firstPrompt = clipFirstPrompt(prompt);
    }
    return updated;
  }

  /** Makes a foreign session this user's own: it gets the user's marker (`agent sessions adopt`). */
  adopt(meta: SessionMeta): SessionMeta {
    // A session directory that is a link was planted to have the marker written elsewhere.
    if (lstatSync(this.dirOf(meta.id)).isSymbolicLink()) throw new StateRootRedirectedError(this.root, this.dirOf(meta.id), "is a symlink");
    const adopted: SessionMeta = { ...meta, marker: this.marker.sign(meta.id) };
    writeSessionMeta(this.dirOf(meta.id), adopted);
    return adopted;
  }

  /**
   * Deletes the session and everything in it. Refused (exit 4) while a runtime
   * owns it: its lock is taken first, so no run can start meanwhile either.
   */
  async remove(meta: SessionMeta): Promise<void> {
    const dir = this.dirOf(meta.id);
    let lock: RuntimeLock;
    try {
      // Loaded here: every admin command opens the session store, and the runtime
      // lock brings bun:ffi (flock), which a reading command need not load.
      const { RuntimeLock } = await import("../storage/runtime-lock.ts");
      lock = await RuntimeLock.acquire(dir);
    } catch (error) {
      if (error instanceof StateDirBusyError) {
        throw new StateDirBusyError(dir, error.owner, `session ${meta.id} is running; wait for it to finish, then remove it`);
      }
      throw error;
    }
    try {
      // The metadata first: from here on the session is not listed, whatever happens below.
      rmSync(join(dir, SESSION_FILE), { force: true });
      for (const entry of readdirSync(dir)) {
        if (!entry.startsWith("runtime.")) rmSync(join(dir, entry), { recursive: true, force: true });
      }
    } finally {
      await lock.release();
    }
    rmSync(dir, { recursive: true, force: true });
  }

  /**
   * Unlists the session (deletes its session.json) if it holds nothing but that
   * and its runtime lock; true when it did. Call while holding its lock, then
   * removeUnlisted() once the lock is released.
   */
  unlistIfUnused(meta: SessionMeta): boolean {
    const dir = this.dirOf(meta.id);
    if (!namesIn(dir).every((name) => name === SESSION_FILE || name.startsWith("runtime."))) return false;
    rmSync(join(dir, SESSION_FILE), { force: true });
    return true;
  }

  /** Deletes the directory of a session unlisted before, unless someone started using it again. */
  removeUnlisted(meta: SessionMeta): void {
    const dir = this.dirOf(meta.id);
    if (namesIn(dir).includes(SESSION_FILE)) return;
    rmSync(dir, { recursive: true, force: true });
  }

  #build(name: string | undefined, given?: string): SessionMeta {
    const now = this.#clock.now().toISOString();
    const id = given ?? this.#ids.next();
    const meta: SessionMeta = { version: 1, id, createdAtUtc: now, lastUsedAtUtc: now, marker: this.marker.sign(id) };
    if (name !== undefined) meta.name = name;
    const temp = join(this.dir, `.new-${meta.id}`);
    try {
      ensureDir(temp);
      writeSessionMeta(temp, meta);
      renameSync(temp, this.dirOf(meta.id));
    } catch (error) {
      rmSync(temp, { recursive: true, force: true });
      throw error;
    }
    fsyncDir(this.dir);
    return meta;
  }
}

function byRecentUse(a: SessionMeta, b: SessionMeta): number {
  return b.lastUsedAtUtc.localeCompare(a.lastUsedAtUtc) || b.id.localeCompare(a.id);
}

