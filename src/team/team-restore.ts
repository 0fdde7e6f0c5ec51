import { type AgentName, LEAD } from "../core/agent-name.ts";
import { owedIdleNotice } from "./owed-idle.ts";
import type { RemoteTeammates } from "./remote-teammates.ts";
import type { TeamContext } from "./team-context.ts";
import type { TeammateRecord, TeammateState } from "./team-registry.ts";
import type { TeammateProtocols } from "./teammate-protocols.ts";
import { restoreWorktree } from "./teammate-worktree-steps.ts";

/**
 * Restores the team from team.json after this session's last runtime stopped
 * (or was killed): every teammate that did not fail gets its interrupted work
 * recovered and starts again from its history; spawns and plan requests a
 * crash cut short are undone; the Lead's processing messages are recovered and
 * fed to its inbox.
 */
export async function restoreTeam(team: TeamContext, parts: { protocols: TeammateProtocols; remote: RemoteTeammates }): Promise<void> {
  const { protocols, remote } = parts;
  const stored = await team.o.registry.read();
  if (team.role === "worker") {
    // The Lead's process owns spawning, the Lead's mailbox and team.json's
    // clean-ups: a worker only learns the team and takes what it may run.
    remote.sync(stored);
    remote.ensureWatch();
    return;
  }
  // First, before any teammate's loop runs again: a result the killed Lead had
  // claimed is ready again before the idle notice that follows it is sent, and
  // the Lead's claims take the two in the order they were sent.
  await team.o.store.recover(LEAD);
  const records: TeammateRecord[] = [];
  for (const { pendingTaskId, ...record } of stored) {
    // A spawn killed before its first task went out: undo it, so the Lead's
    // resumed turn (told its spawn call did not finish) can spawn the name again.
    if (pendingTaskId !== undefined && !(await team.o.store.find(pendingTaskId))) continue;
    // A plan recorded as submitted whose request never went out: not submitted.
    if (record.plan?.state === "submitted" && record.plan.requestId && !(await team.o.store.find(record.plan.requestId))) {
      record.plan = { state: "drafting" };
    }
    records.push(record);
  }
  // Started once every mailbox is recovered: a loop started earlier could send a
  // teammate not yet recovered a message that overtakes the one it had claimed.
  const restarting: AgentName[] = [];
  for (const record of records) {
    const state: TeammateState = record.state === "failed" || record.state === "shutdown" ? record.state : "idle";
    const retired = state === "shutdown";
    team.workers.set(record.name, { record: { ...record, state }, runner: undefined, active: false, current: undefined, pokes: 0, retired });
    if (retired) await protocols.settleRetired(record.name);
    // A teammate a live worker holds keeps its work: recovering it here would
    // take back the message that worker is answering.
    else if (state !== "failed" && !(await team.takeLease(record.name))) continue;
    else if (state !== "failed" && record.worktree && !(await restoreWorktree(team, record))) continue;
    else if (state !== "failed") {
      await team.o.store.recover(record.name);
      // Left running: killed perhaps between its last ack and its idle notice.
      // Running until the notice is out, so team.json says idle only after it.
      const owed = record.state === "running" ? await owedIdleNotice(team, record.name) : undefined;
      const worker = team.workers.get(record.name);
      if (owed !== undefined && worker) {
        worker.owedIdle = owed;
        worker.record = { ...worker.record, state: "running" };
      }
      restarting.push(record.name);
    }
  }
  for (const name of restarting) team.startWorker(name);
  remote.ensureWatch();
  // A teammate a killed runtime left "running" with no work to pick up again
  // never changes state here: without this write team.json would keep saying
  // "running" after this runtime has finished.
  for (const record of stored) {
    const kept = team.workers.get(record.name);
    if (!kept) await team.o.registry.remove(record.name);
    // Changed here too: one whose worktree could not be restored is failed now.
    // A spawn whose task did go out is complete; a teammate a live worker runs keeps the state it wrote.
    else if (!team.runsHere(record.name)) {
      if (record.pendingTaskId) await team.persist(record.name);
    } else if (record.state === "running" || record.pendingTaskId || kept.record.state !== record.state || kept.record.plan?.state !== record.plan?.state) await team.persist(record.name);
  }
  await team.pumpLead();
}
