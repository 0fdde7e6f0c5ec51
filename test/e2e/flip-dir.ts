// A child for the race test: swaps the directory entries argv[2] and argv[3]
// (a real directory and a symlink leading out of the workspace) with
// renameat2(RENAME_EXCHANGE), as fast as it can, until killed. Each swap is one
// atomic step, so the path always exists, as one or the other. On SIGTERM it
// prints how many swaps it made.
import { bindLibc } from "../../src/storage/libc.ts";

const [a, b] = process.argv.slice(2) as [string, string];
const libc = bindLibc({ renameat2: { args: ["i32", "ptr", "i32", "ptr", "u32"], returns: "i32" } });
if (!libc) throw new Error("renameat2 is not available here");
const renameat2 = libc.call.renameat2 as (fromDir: number, from: Uint8Array, toDir: number, to: Uint8Array, flags: number) => number;
const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;
const from = Buffer.from(`${a}\0`);
const to = Buffer.from(`${b}\0`);
let swaps = 0;
process.on("SIGTERM", () => {
  process.stdout.write(`${swaps}\n`);
  process.exit(0);
});
process.stdout.write("flipping\n");
for (;;) {
  for (let i = 0; i < 10_000; i += 1) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) !== 0) throw new Error(`renameat2 failed: errno ${libc.errno()}`);
    swaps += 1;
  }
  // Let the SIGTERM handler run.
  await Bun.sleep(0);
}
