// MailWakeups on both backends: a message sent by another process wakes the
// watcher of its recipient, and only that one (not a watcher of a mailbox sent
// nothing); a stopped watch is not woken.
import { describe, expect, test } from "bun:test";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { mailboxBackends } from "./backends.ts";

const sender = `${import.meta.dir}/../fixtures/mailbox-place.ts`;

for (const backend of mailboxBackends()) {
  describe(`MailWakeups: ${backend.name}`, () => {
    test("a send from another process wakes the recipient's watcher only; a stopped watch sleeps", async () => {
      const place = await backend.place();
      // Both mailboxes exist before the watch, as a running team's do.
      const store = backend.open(place);
      for (const agent of ["alice", "bob", "carol", "dave"]) {
        await store.send(createMessage({ sender: "lead", recipient: agent, kind: "task", content: "first" }, { clock: systemClock, ids: uuidV7Source }));
        await store.ack((await store.claim(agent))!);
      }
      // A slow poll far off: what wakes the watcher here is the send itself.
      const wakeups = backend.wakeups(place, { pollMs: backend.name === "postgres" ? 60_000 : 20 });
      const woken: string[] = [];
      const alice = Promise.withResolvers<void>();
      await wakeups.watch("alice", () => {
        woken.push("alice");
        alice.resolve();
      });
      const bobWatch = await wakeups.watch("bob", () => woken.push("bob"));
      // A witness: its mailbox is sent to after bob's, so its wake-up comes after any bob's would.
      const carol = Promise.withResolvers<void>();
      await wakeups.watch("carol", () => carol.resolve());
      await Bun.sleep(100);
      woken.length = 0; // subscribing may wake once: something could have come meanwhile
      bobWatch.stop();
      // Watching, and sent nothing: a wake-up of every watcher on any send would reach dave before carol.
      await wakeups.watch("dave", () => woken.push("dave"));
      const script = `
        const { openStoreAt } = await import(${JSON.stringify(sender)});
        const { createMessage } = await import(${JSON.stringify(`${import.meta.dir}/../../src/core/message.ts`)});
        const { systemClock } = await import(${JSON.stringify(`${import.meta.dir}/../../src/core/clock.ts`)});
        const { uuidV7Source } = await import(${JSON.stringify(`${import.meta.dir}/../../src/core/ids.ts`)});
        const opened = openStoreAt(process.argv[1]);
        for (const to of ["alice", "bob", "carol"]) {
          await opened.store.send(createMessage({ sender: "lead", recipient: to, kind: "task", content: "wake up" }, { clock: systemClock, ids: uuidV7Source }));
        }
        await opened.close();`;
      const child = Bun.spawn([process.execPath, "-e", script, place], { stderr: "inherit" });
      expect(await child.exited).toBe(0);
      await alice.promise;
      await carol.promise;
      expect(woken.filter((name) => name === "bob" || name === "dave")).toEqual([]);
      expect((await store.claim("alice"))!.content).toBe("wake up");
      await wakeups.close();
    });
  });
}
