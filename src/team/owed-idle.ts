import type { AgentName } from "../core/agent-name.ts";
import { derivedId } from "./derived-id.ts";
import type { TeamContext } from "./team-context.ts";

/**
 * The message whose idle notice a killed runtime owes for `name`, if any: the
 * input of its last finished turn, acked (its result is out), with no idle
 * notice sent for it or for a message that joined that turn, and nothing that
 * kept it working after it (a TeammateIdle or TaskCompleted refusal, whose task
 * is its next turn). A kill between the ack and the notice leaves exactly this.
 * The notice the loop then sends carries the id derived from that input, so a
 * notice that did go out after all is refused as a duplicate, never sent twice.
 */
export async function owedIdleNotice(team: TeamContext, name: AgentName): Promise<string | undefined> {
  const records = await team.o.histories.read(name);
  let last: { key: string; finished: boolean; joined: string[] } | undefined;
  for (const record of records) {
    if (record.type !== "turn") continue;
    if (record.joins === undefined && record.status === "started") last = { key: record.key, finished: false, joined: [] };
    else if (last && record.joins === last.key && record.status === "started") last.joined.push(record.key);
    else if (last && record.key === last.key && record.status === "finished") last.finished = true;
  }
  if (!last?.finished) return undefined;
  const { key, joined } = last;
  // Acked: a message still in ready/ or processing/ is worked again, and its turn sends the notice.
  if ((await team.o.store.find(key))?.state !== "done") return undefined;
  const told = [key, ...joined].map((id) => derivedId(id, "idle"));
  const keptWorking = [derivedId(key, "teammate-idle"), derivedId(key, "task-refused")];
  const found = await Promise.all([...told, ...keptWorking].map((id) => team.o.store.find(id)));
  return found.some((each) => each !== null) ? undefined : key;
}
