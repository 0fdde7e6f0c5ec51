import { join } from "node:path";
import { z } from "zod";
import { ensureDir, writeFileAtomic } from "../storage/atomic-file.ts";
import { readStateFile } from "../storage/state-file.ts";
import { lazySchema } from "../core/lazy-schema.ts";

// The user's answers about projects, kept in the user's config directory
// (`trust.json` beside config.json), never in a repository: a checkout cannot
// vouch for itself.

export const TrustEntry = lazySchema(() =>
  z.strictObject({
    /** "declined": the user said no on a terminal; not asked again until the project's settings change. */
    decision: z.enum(["trusted", "declined"]),
    /** What was shown and agreed to (src/trust/fingerprint.ts): a change to it ends the decision. */
    fingerprint: z.string().min(1),
    /** ISO time of the decision. */
    at: z.string().min(1),
  }),
);
export type TrustEntry = z.infer<typeof TrustEntry>;

export const TrustFile = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    /** By the workspace's real path. */
    projects: z.record(z.string(), TrustEntry),
  }),
);
export type TrustFile = z.infer<typeof TrustFile>;

export const TRUST_FILE_NAME = "trust.json";

export class TrustStore {
  readonly path: string;

  constructor(userConfigDir: string) {
    this.path = join(userConfigDir, TRUST_FILE_NAME);
  }

  /** The decision recorded for a workspace (its real path), if any. */
  get(realPath: string): TrustEntry | undefined {
    return this.#read().projects[realPath];
  }

  record(realPath: string, entry: TrustEntry): void {
    const file = this.#read();
    this.#write({ ...file, projects: { ...file.projects, [realPath]: entry } });
  }

  /** Forgets the workspace's decision; whether there was one. */
  remove(realPath: string): boolean {
    const file = this.#read();
    if (file.projects[realPath] === undefined) return false;
    const { [realPath]: _gone, ...rest } = file.projects;
    this.#write({ ...file, projects: rest });
    return true;
  }

  #read(): TrustFile {
    // A damaged file is an error naming it, never "nothing trusted" silently rewritten.
    return readStateFile(this.path, TrustFile) ?? { version: 1, projects: {} };
  }

  #write(file: TrustFile): void {
    ensureDir(join(this.path, ".."));
    // 0600 like the user's config: it says which checkouts may run code as this user.
    writeFileAtomic(this.path, `${JSON.stringify(file, null, 2)}\n`);
  }
}
