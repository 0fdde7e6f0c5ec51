import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.ts";

/** Where a worktree teammate works, as team.json keeps it (so a restore finds it again). */
export const TeammateWorktree = lazySchema(() =>
  z.strictObject({
    /** The worktree's root: `<workspace>/.agent/worktrees/<session>/<name>`. */
    path: z.string().min(1),
    /** The teammate's workspace: the worktree's root, or the same subdirectory the Lead's workspace is of its repository. */
    workspace: z.string().min(1),
    /** `agent/<session>/<name>`. */
    branch: z.string().min(1),
    /** The commit the branch started from: its diff stat counts from here. */
    base: z.string().regex(/^[0-9a-f]{40,64}$/),
  }),
);
export type TeammateWorktree = z.infer<typeof TeammateWorktree>;

export const ISOLATIONS = ["none", "worktree"] as const;
export const Isolation = lazySchema(() => z.enum(ISOLATIONS));
export type Isolation = z.infer<typeof Isolation>;
