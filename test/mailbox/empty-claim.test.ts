// A claim of a mailbox this process made and saw empty, unchanged since, answers
// without the lock (each agent looks between the steps of every turn); whatever
// reaches ready/ — from another process, by hand, by a release or a recover — is
// still claimed.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { serializeMessage } from "../../src/core/message-format.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { fileNameOf } from "../../src/mailbox/paths.ts";
import { openOsLock } from "../../src/storage/os-lock.ts";
import { tempDir } from "../support/temp-dir.ts";

const message = (content: string, recipient = "bob") => createMessage({ sender: "lead", recipient, kind: "task", content }, { clock: systemClock, ids: uuidV7Source });

/** Another open file of the mailbox lock, taken: as another process holding it would. */
function holdLock(stateDir: string) {
  const other = openOsLock(join(stateDir, "mailboxes.lock.flock"))!;
  expect(other.tryTake()).toBe(true);
  return other;
}

describe("a claim of a mailbox seen empty", () => {
  test("answers at once while another holds the lock, for a mailbox this process made", async () => {
    const stateDir = tempDir("agent-empty-claim-");
    const store = new FileMailboxStore({ stateDir, lock: { waitMs: 200 } });
    await store.prepare("bob");
    const other = holdLock(stateDir);
    try {
      expect(await store.claim("bob")).toBeNull();
      expect(await store.claimMany("bob", 16)).toEqual([]);
      // Anything that changes the mailbox still waits for the lock (and gives up naming its holder).
      const refused = await store.send(message("x")).catch((error: Error) => error);
      expect(String((refused as Error).message)).toContain("holds it");
    } finally {
      other.give();
    }
  });

  test("claims what another process sent since", async () => {
    const stateDir = tempDir("agent-empty-claim-");
    const store = new FileMailboxStore({ stateDir });
    await store.prepare("bob");
    expect(await store.claim("bob")).toBeNull();
    const sent = message("from another process");
    const script = `import { FileMailboxStore } from ${JSON.stringify(join(import.meta.dir, "../../src/mailbox/file-store.ts"))};
      await new FileMailboxStore({ stateDir: process.argv[1] }).send(JSON.parse(process.argv[2]));`;
    const child = Bun.spawnSync([process.execPath, "-e", script, stateDir, JSON.stringify(sent)], { stderr: "pipe" });
    expect(child.stderr.toString()).toBe("");
    expect(child.exitCode).toBe(0);
    expect((await store.claim("bob"))?.id).toBe(sent.id);
  });

  test("claims a message put into ready/ by hand", async () => {
    const stateDir = tempDir("agent-empty-claim-");
    const store = new FileMailboxStore({ stateDir });
    await store.prepare("bob");
    expect(await store.claim("bob")).toBeNull();
    // A later clock tick than the look above: the directory's mtime is all that tells of it.
    await Bun.sleep(20);
    const dropped = message("dropped by hand");
    writeFileSync(join(stateDir, "mailboxes", "bob", "ready", fileNameOf(dropped.id)), serializeMessage(dropped));
    expect((await store.claim("bob"))?.id).toBe(dropped.id);
  });

  test("claims a message released or recovered back into ready/", async () => {
    const stateDir = tempDir("agent-empty-claim-");
    const store = new FileMailboxStore({ stateDir });
    await store.prepare("bob");
    await store.send(message("one"));
    const claimed = (await store.claim("bob"))!;
    expect(await store.claim("bob")).toBeNull();
    // Given back while a claim looks: the look either waits for it or sees it.
    const [, during] = await Promise.all([store.release(claimed), store.claim("bob")]);
    const again = during ?? (await store.claim("bob"));
    expect(again?.id).toBe(claimed.id);
    expect(await store.claim("bob")).toBeNull();

    // A later runtime's store: its first look at a mailbox it made finds it empty;
    // the message a dead process left in processing/ comes back with recover.
    const later = new FileMailboxStore({ stateDir });
    await later.prepare("bob");
    expect(await later.claim("bob")).toBeNull();
    const [recovered, looked] = await Promise.all([later.recover("bob"), later.claim("bob")]);
    expect(recovered.recovered.map((each) => each.id)).toEqual([claimed.id]);
    expect((looked ?? (await later.claim("bob")))?.id).toBe(claimed.id);
  });
});
