import { StateDirBusyError, UnknownAgentError } from "../../core/errors.ts";
import { RuntimeLock } from "../../storage/runtime-lock.ts";
import { FileTeamRegistry, type TeamRegistry, type TeammateRecord } from "../../team/team-registry.ts";
import { assertTeammateName } from "../../core/agent-name.ts";
import type { GlobalValues } from "../args.ts";
import { type AdminSession, requireAdminSession } from "../context.ts";

/**
 * Runs `edit` on the teammate `name` holding the session's runtime lock: a live runtime owns team.json
 * (it rewrites it from memory), so a teammate is removed or reset only in a
 * stopped session, and no runtime can start on it meanwhile.
 */
export async function editStoppedTeammate<T>(
  args: GlobalValues & { session?: string; name: string },
  edit: (teammate: TeammateRecord, team: { session: AdminSession; registry: TeamRegistry; teammates: TeammateRecord[] }) => Promise<T>,
): Promise<{ session: AdminSession; value: T }> {
  // The name first: nothing is read or locked for a bad one.
  const name = assertTeammateName(args.name);
  const session = requireAdminSession(args);
  let lock: RuntimeLock;
  try {
    lock = await RuntimeLock.acquire(session.dir);
  } catch (error) {
    if (!(error instanceof StateDirBusyError)) throw error;
    throw new StateDirBusyError(
      session.dir,
      error.owner,
      `session ${session.meta.id} is running and owns its team; stop it (or let it finish) first, then run this again`,
    );
  }
  try {
    const registry = new FileTeamRegistry(session.dir);
    const teammates = await registry.read();
    const teammate = teammates.find((t) => t.name === name);
    if (!teammate) throw new UnknownAgentError(name, "run `agent team list` to see the teammates");
    return { session, value: await edit(teammate, { session, registry, teammates }) };
  } finally {
    await lock.release();
  }
}
