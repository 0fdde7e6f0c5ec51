import type { MessageKind } from "../core/message.ts";
import type { TeammatePlan, TeammateState } from "./team-registry.ts";

/** What the team reports as it works, for progress and `stream-json`. */
export type TeamEvent =
  | { type: "teammate"; name: string; role: string; state: TeammateState; reason?: string; plan?: TeammatePlan["state"] }
  | { type: "protocol"; kind: MessageKind; from: string; to: string; id: string; requestId: string; summary: string }
  | { type: "mailbox"; op: "send" | "claim" | "ack" | "release" | "quarantine"; agent: string; id: string; from: string; kind: MessageKind }
  /**
   * A Lead that runs no teammate itself (--remote-teammates): `name` has had
   * work for `waitingMs` and no live process holds its lease. Once per teammate
   * until a worker takes it.
   */
  | { type: "unattended"; name: string; role: string; waitingMs: number };
