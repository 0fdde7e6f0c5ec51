// A child for the attachments crash test: kills (SIGKILL) the process argv[2]
// argv[4] ms after the first entry shows in an `attachments/` dir of a session
// under the state root argv[3] (a temp file being written, or the attachment
// itself), or after 60 s. A process of its own, watching without yielding, so
// the test's event loop stays free to answer the model's requests.
import { readdirSync } from "node:fs";
import { join } from "node:path";

const [pid, stateRoot, delay] = process.argv.slice(2) as [string, string, string];
const sessions = join(stateRoot, "sessions");
const seen = (): boolean => {
  try {
    return readdirSync(sessions).some((id) => {
      try {
        return readdirSync(join(sessions, id, "attachments")).length > 0;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
};
const until = Date.now() + 60_000;
process.stdout.write("watching\n");
while (Date.now() < until && !seen()) {
  // Polling without a pause: the window is a few milliseconds wide.
}
for (const end = performance.now() + Number(delay); performance.now() < end; ) {
  // Waiting without yielding: a timer would be late by more than the write takes.
}
process.kill(Number(pid), "SIGKILL");
