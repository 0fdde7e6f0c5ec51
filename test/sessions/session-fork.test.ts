import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";
import { readAttachmentRange } from "../../src/attachments/attachment-text.ts";
import { forkSession } from "../../src/sessions/session-fork.ts";
import { tempDir } from "../support/temp-dir.ts";

test("a fork carries the Lead's conversation and the attachments its notes name (a large tool result compaction saved)", async () => {
  const root = tempDir("agent-fork-");
  const from = join(root, "from");
  const to = join(root, "to");
  mkdirSync(join(from, "agents"), { recursive: true });
  mkdirSync(to);
  const { id } = await new FileAttachments(from).put(Buffer.from("x".repeat(50_000)));
  writeFileSync(join(from, "agents", "lead.jsonl"), `{"note":"read_attachment, id \\"${id}\\", offset 2000"}\n`);
  const meta = { version: 1 as const, id: "01900000-0000-7000-8000-000000000000", createdAtUtc: "2026-01-01T00:00:00.000Z", lastUsedAtUtc: "2026-01-01T00:00:00.000Z" };
  await forkSession(meta, from, to);
  const read = await readAttachmentRange(new FileAttachments(to), id, 2_000, 1_024);
  expect(read?.size).toBe(50_000);
  expect(read?.text).toBe("x".repeat(1_024));
});
