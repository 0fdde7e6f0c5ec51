import { expect } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { type MailboxMessage, createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { type AgentResult, type RunOptions, runAgent } from "./agent-binary.ts";

// Shared by the end-to-end tests: a fresh state dir, the binary bound to it, and
// the store on the same dir to set up states the CLI cannot reach by itself.

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A state root with one session, and an `agent` runner bound to the root through
 * --state-dir: the admin commands default to that session (the most recent).
 * `stateDir` is the session's directory, where its mailboxes and files are.
 */
export function setup() {
  const root = join(tempDir("agent-e2e-"), "state");
  const sessions = new SessionStore(root);
  const session = sessions.create();
  const stateDir = sessions.dirOf(session.id);
  const agentWith = (options: RunOptions, ...args: string[]) => runAgent([...args, "--state-dir", root], options);
  const agent = (...args: string[]) => agentWith({}, ...args);
  const store = new FileMailboxStore({ stateDir });
  return { root, sessionId: session.id, stateDir, agent, agentWith, store };
}
export type Agent = ReturnType<typeof setup>["agent"];

export function message(recipient: string, content: string, clock = systemClock, sender = "lead"): MailboxMessage {
  return createMessage({ sender, recipient, kind: "task", content }, { clock, ids: uuidV7Source });
}

export function expectOk(result: AgentResult): void {
  if (result.code !== 0) throw new Error(`agent exited ${result.code}: ${result.stderr}`);
  expect(result.stderr).toBe("");
}

/** The error contract: exit code, nothing on stdout, one `agent: …` line on stderr. */
export function expectError(result: AgentResult, code: number, pattern: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(/^agent: [^\n]+\n$/);
  expect(result.stderr).toMatch(pattern);
}

export async function showJson(agent: Agent, id: string) {
  const shown = await agent("mailbox", "show", id, "--json");
  expectOk(shown);
  return JSON.parse(shown.stdout);
}
