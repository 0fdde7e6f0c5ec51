import type { PermissionRequestContent, PermissionResponse } from "../protocols/protocol-messages.ts";
import type { TeammateRecord } from "../team/team-registry.ts";
import { type OwnershipCheck, OwnedPathError } from "../tools/checked-write.ts";

export interface OwnershipOptions {
  /** The teammates as the runtime knows them now, with what they own. */
  teammates: () => readonly TeammateRecord[];
  /** The Lead's side's verdict on `agent`'s request (a teammate's goes as a permission_request). */
  ask: (agent: string, request: PermissionRequestContent, signal: AbortSignal) => Promise<PermissionResponse>;
}

/**
 * The check write_file and edit_file make in a shared workspace: a path some
 * teammate owns (`owns` globs, from its spawn or definition) is written by
 * another agent only with the Lead's side's yes — an allow rule naming it or
 * the user's answer; the permission mode alone does not do (docs/files.md#ownership).
 */
export function ownershipCheck(o: OwnershipOptions): OwnershipCheck {
  return async ({ agent, path, tool, input, signal }) => {
    for (const teammate of o.teammates()) {
      if (teammate.name === agent || !teammate.owns) continue;
      const pattern = teammate.owns.find((glob) => new Bun.Glob(glob).match(path));
      if (pattern === undefined) continue;
      const why = `${path} is owned by ${teammate.name} (owns ${pattern})`;
      const verdict = await o.ask(agent, { tool, effect: "edit", subject: path, why, input, owner: teammate.name }, signal);
      if (!verdict.allow) throw new OwnedPathError(tool, path, teammate.name, pattern, verdict.reason);
      return;
    }
  };
}
