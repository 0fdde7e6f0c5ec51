// A child for the crash test: kills (SIGKILL) the process argv[2] argv[5] ms
// after its write of argv[3] shows — a temp file of ours beside it, or the file's
// first byte no longer argv[4] (a write in place) — or after 30 s. A process of
// its own, so the test's event loop stays free to answer the model's requests.
import { closeSync, openSync, readSync, readdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { TEMP_PREFIX } from "../../src/workspace-files/atomic-write.ts";

const [pid, file, before, delay] = process.argv.slice(2) as [string, string, string, string];
const dir = dirname(file);
const head = Buffer.alloc(1);
const until = Date.now() + 30_000;
process.stdout.write("watching\n");
while (Date.now() < until) {
  const fd = openSync(file, "r");
  readSync(fd, head, 0, 1, 0);
  closeSync(fd);
  if (head.toString() !== before || readdirSync(dir).some((name) => name.startsWith(TEMP_PREFIX) && name !== basename(file))) break;
}
for (const end = performance.now() + Number(delay); performance.now() < end; ) {
  // Waiting without yielding: a timer would be late by more than the write takes.
}
process.kill(Number(pid), "SIGKILL");


