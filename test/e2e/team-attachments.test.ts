import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { attachmentIdOf } from "../../src/attachments/attachment-store.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { parseResult } from "./run-fixture.ts";
import { TeamList, eventsIn, teamSetup } from "./team-fixture.ts";

// A teammate's answer three times the mailbox cap (1 MiB by default), on the
// compiled binary and both stores: alice's result reaches the Lead as its first
// part and an attachment's id, and the Lead reads the rest with read_attachment,
// range after range (with compactions between, as a long read brings), until
// what it read, joined, is alice's answer byte for byte. Nothing is quarantined
// and alice stays usable. Before attachments, alice was marked failed and her
// input quarantined: the answer was lost.

beforeAll(() => {
  ensureBinary();
}, 120_000);
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});

/** 3 MiB of lines with two- and three-byte characters, so ranges are cut between characters. */
function bigAnswer(): string {
  const line = `${"résumé-日本語-".repeat(300)}\n`;
  const lines: string[] = [];
  let bytes = 0;
  for (let n = 0; bytes < 3 * 1024 * 1024; n += 1) {
    const numbered = `${n}:${line}`;
    lines.push(numbered);
    bytes += Buffer.byteLength(numbered);
  }
  return lines.join("");
}

const FINAL = "alice's report is read in full.";
const NOTE = /\n\n\[… (\d+) more bytes in attachment ([0-9a-f]{32}) \((\d+) bytes in all, over the mailbox cap of (\d+)\); read them with read_attachment, id "\2", offset (\d+)\]$/;
const HEADER = /^\[attachment ([0-9a-f]{32}): bytes (\d+)-(\d+) of (\d+); (?:continue with offset (\d+)|the end)\]\n/;

/**
 * The Lead's side after its user turn: on alice's result, reads the attachment
 * from where the message's part ended, each range from the last one's end, and
 * answers once at the end. Every range it was given is kept by the offset it started at.
 */
function leadReader() {
  const read = new Map<number, string>();
  let first: { text: string; id: string; offset: number } | undefined;
  const respond = (request: RecordedRequest) => {
    if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
    const last = request.body.messages.at(-1)!;
    // A compaction's summary request: the conversation so far, then the instruction.
    if (last.role === "user" && String(last.content).startsWith("Summarise the conversation above")) return { text: "Reading alice's attachment." };
    let next: number | undefined;
    let id: string;
    if (last.role === "tool") {
      const content = String(last.content);
      const header = HEADER.exec(content);
      if (!header) throw new Error(`not a read_attachment result: ${content.slice(0, 200)}`);
      id = header[1]!;
      read.set(Number(header[2]), content.slice(header[0].length));
      if (header[5] === undefined) return { text: FINAL };
      next = Number(header[5]);
    } else {
      const result = eventsIn(request).find((event) => event.kind === "result" && event.from === "alice");
      if (!result) throw new Error("the Lead's event turn has no result from alice");
      const note = NOTE.exec(result.content);
      if (!note) throw new Error(`alice's result carries no attachment note: ${result.content.slice(-300)}`);
      id = note[2]!;
      next = Number(note[5]);
      first = { text: result.content.slice(0, note.index), id, offset: next };
    }
    return { toolCalls: [{ name: "read_attachment", arguments: { id, offset: next } }] };
  };
  /** The message's part, then every range in order: each must start where the last ended. */
  const joined = () => {
    if (!first) throw new Error("alice's result never reached the Lead");
    let text = first.text;
    let at = first.offset;
    expect(Buffer.byteLength(text)).toBe(at);
    for (const [start, part] of [...read.entries()].sort(([a], [b]) => a - b)) {
      expect(start).toBe(at);
      text += part;
      at += Buffer.byteLength(part);
    }
    return text;
  };
  return { respond, joined, ranges: () => read.size };
}

describe.each([
  ["files", async () => [] as string[]],
  [
    "PostgreSQL",
    async () => {
      cluster ??= startPostgres();
      return ["--store", await (await cluster).database()];
    },
  ],
])("a teammate's answer over the mailbox cap, store: %s", (_name, storeArgs) => {
  test("the Lead gets its first part and an attachment id, reads the rest with read_attachment, byte for byte; nothing quarantined; removed with the session", async () => {
    const answer = bigAnswer();
    const reader = leadReader();
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write the long report." } }] },
        { identity: "lead", text: "alice is writing it." },
        { identity: "alice", text: answer },
      ],
      { respond: reader.respond },
    );
    servers.push(server);
    const store = await storeArgs();
    const { run, agent, sessionDir } = teamSetup();
    const result = await run(["Have alice write the long report.", "--base-url", server.url, "--output", "json", "--max-turns", "200", ...store]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "success", result: FINAL });
    server.assertDone();

    const joined = reader.joined();
    expect(Buffer.byteLength(joined)).toBe(Buffer.byteLength(answer));
    expect(joined === answer).toBe(true);
    // 3 MiB less the message's 16 KiB, in ranges of at most 32 KiB.
    expect(reader.ranges()).toBe(Math.ceil((Buffer.byteLength(answer) - 16 * 1024) / (32 * 1024)));

    const list = await agent("team", "list", "--json", ...store);
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: "" });
    expect(TeamList.parse(JSON.parse(list.stdout)).teammates.map(({ name, state, mailbox }) => ({ name, state, mailbox }))).toEqual([
      { name: "alice", state: "idle", mailbox: { ready: 0, processing: 0, done: 1, quarantine: 0 } },
    ]);

    // Kept with the session, and removed with it.
    const session = TeamList.parse(JSON.parse(list.stdout)).session_id;
    const id = attachmentIdOf(Buffer.from(answer));
    const dir = sessionDir();
    const stored = await storedAttachments(store, dir, session);
    expect(stored).toEqual([id]);
    const removed = await agent("sessions", "rm", session, ...store);
    expect({ code: removed.code, stderr: removed.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await storedAttachments(store, dir, session)).toEqual([]);
  }, 180_000);
});

describe("a kill -9 while the attachment is written or the message sent (files store)", () => {
  test("no message ever names a missing or partial attachment; agent drain then delivers the answer once, read back byte for byte", async () => {
    const answer = bigAnswer();
    const total = Buffer.byteLength(answer);
    const outcomes: string[] = [];
    // At once when the attachments dir shows an entry (mid-write), then later: after the rename, around the send.
    for (const delay of [0, 3, 8, 20]) {
      const reader = leadReader();
      const server = ScriptedModelServer.start(
        [
          { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write the long report." } }] },
          { identity: "lead", text: "alice is writing it." },
          { identity: "alice", text: answer },
        ],
        { respond: reader.respond },
      );
      servers.push(server);
      const { workspace, stateDir, sessionDir, drain, agent } = teamSetup();
      const child = Bun.spawn(
        [AGENT_BINARY, "run", "Have alice write the long report.", "--base-url", server.url, "--max-turns", "200", "--workspace", workspace, "--state-dir", stateDir],
        { env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" }, stdin: "ignore", stdout: "ignore", stderr: "ignore" },
      );
      const killer = Bun.spawn([process.execPath, join(import.meta.dir, "kill-on-attachment.ts"), String(child.pid), stateDir, String(delay)], { stdout: "ignore" });
      await killer.exited;
      expect(await child.exited).toBe(137);

      // What the kill left: every message naming an attachment finds it whole.
      const dir = sessionDir();
      const named = messagesIn(join(dir, "mailboxes", "lead")).flatMap((content) => {
        const note = NOTE.exec(content);
        return note ? [{ id: note[2]!, size: Number(note[3]) }] : [];
      });
      for (const { id, size } of named) expect(statSync(join(dir, "attachments", id), { throwIfNoEntry: false })?.size).toBe(size);
      const stored = readdirSync(join(dir, "attachments")).filter((name) => /^[0-9a-f]{32}$/.test(name));
      outcomes.push(named.length > 0 ? "sent" : stored.length > 0 ? "attachment stored, not sent" : "attachment not stored");

      const drained = await drain(["--base-url", server.url, "--max-turns", "200", "--output", "json"]);
      expect({ code: drained.code, stderr: drained.code === 0 ? "" : drained.stderr }).toEqual({ code: 0, stderr: "" });
      expect(reader.joined() === answer).toBe(true);
      expect(Buffer.byteLength(reader.joined())).toBe(total);
      const list = await agent("team", "list", "--json");
      expect(TeamList.parse(JSON.parse(list.stdout)).teammates.map(({ name, state, mailbox }) => ({ name, state, mailbox }))).toEqual([
        { name: "alice", state: "idle", mailbox: { ready: 0, processing: 0, done: 1, quarantine: 0 } },
      ]);
      // The Lead got alice's answer once: one result message, done.
      const results = messagesIn(join(dir, "mailboxes", "lead")).filter((content) => NOTE.test(content));
      expect(results).toHaveLength(1);
    }
    console.log(`kill points: ${outcomes.join(", ")}`);
  }, 300_000);
});

/** The attachments a session has: the files of its dir, or its rows of the database the `--store` arguments name. */
async function storedAttachments(store: string[], dir: string, session: string): Promise<string[]> {
  if (store.length === 0) {
    const path = join(dir, "attachments");
    return existsSync(path) ? readdirSync(path) : [];
  }
  const sql = new SQL(store[1]!, { max: 1 });
  try {
    const rows: { id: string }[] = await sql`SELECT id FROM agent_attachments WHERE session = ${session}`;
    return rows.map((row) => row.id);
  } finally {
    await sql.close();
  }
}

/** The content of every message file in a mailbox, any state. */
function messagesIn(mailbox: string): string[] {
  return ["ready", "processing", "done", "quarantine"].flatMap((state) => {
    const dir = join(mailbox, state);
    const names = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith(".json")) : [];
    return names.map((entry) => (JSON.parse(readFileSync(join(mailbox, state, entry.name), "utf8")) as { content: string }).content);
  });
}
