/**
 * `npm run bench`: every benchmark in turn (their output passed through as it
 * comes), then one summary — each figure that has a goal, its value in this
 * run, the goal, met or not — so where the project stands fits on one screen.
 * A figure is read from the last line of its bench (one JSON object); the
 * goals are kept here, in one place (docs/performance.md says why each is what
 * it is). The load average is printed beside: the goals are for a quiet machine.
 *
 *   bun bench/summary.ts            every bench
 *   BENCH_ONLY=resume,harness bun bench/summary.ts
 *
 * Exits 1 when a bench failed to run (not when a goal is missed).
 */
import { loadavg } from "node:os";
import { join } from "node:path";

type Goal = { figure: string; at: "<=" | ">="; goal: number };
interface Bench {
  name: string;
  goals: Goal[];
  /** Figures shown without a goal (a bench that has none). */
  shown?: string[];
}

const atMost = (figure: string, goal: number): Goal => ({ figure, at: "<=", goal });
const atLeast = (figure: string, goal: number): Goal => ({ figure, at: ">=", goal });

const BENCHES: Bench[] = [
  { name: "mailbox", goals: [atLeast("claimAckRatio", 0.8), atLeast("sendRatio", 0.9), atMost("firstClaimRatio", 3), atMost("firstClaimForeignRatio", 3), atMost("listRatio", 3)] },
  { name: "team", goals: [atMost("batchRatio", 1.1), atMost("scaleRatio8", 1.15), atMost("scaleRatio32", 1.25), atMost("scaleRatio64", 1.5)] },
  { name: "startup", goals: [atMost("versionRatio", 3), atMost("mailboxShowRatio", 2.5), atMost("runHelpRatio", 3), atMost("firstRequestRatio", 6)] },
  { name: "grep", goals: [atMost("ratio", 2)] },
  { name: "store", goals: [atLeast("pgClaimAckVsBare1", 0.7), atLeast("pgClaimAckVsBare4", 0.7), atLeast("postgresClaimAck4PerSec", 4_000), atMost("postgresWakeMedianMs", 20)] },
  { name: "worker", goals: [], shown: ["current.idleCpuPercent", "current.idleStatementsPerS", "current.wakeMedianMs"] },
  { name: "workspace", goals: [atMost("journalRatio", 1.5)] },
  { name: "harness", goals: [atMost("stepRatio", 1.5), atMost("stepRatio2000", 2)] },
  // One figure per warm count (byWarm[i]): the goal holds for each.
  { name: "memory", goals: [atMost("byWarm.peakRssPerTeammateMiB", 0.5)] },
  { name: "resume", goals: [atMost("resumeRatio", 2), atMost("resumeRatioUncompacted", 2)] },
  { name: "resume-cpu", goals: [], shown: ["resumeCpuMs", "freshCpuMs"] },
];

/** Runs `bench/<name>.ts`, its output passed through; returns its last JSON line, or why there is none. */
async function run(name: string): Promise<{ figures: Record<string, unknown> } | { failed: string }> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, `${name}.ts`)], { stdout: "pipe", stderr: "inherit", stdin: "ignore" });
  let last = "";
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    const text = decoder.decode(chunk, { stream: true });
    process.stdout.write(text);
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) if (line.startsWith("{")) last = line;
  }
  if (pending.startsWith("{")) last = pending;
  const code = await child.exited;
  if (code !== 0) return { failed: `exited ${code}` };
  try {
    return { figures: JSON.parse(last) as Record<string, unknown> };
  } catch {
    return { failed: "printed no JSON line of figures" };
  }
}

/** The values at `path` (dots; an array on the way gives one value per element), each with its path written out. */
function valuesAt(value: unknown, path: string[], label = ""): [string, unknown][] {
  if (path.length === 0) return [[label, value]];
  if (Array.isArray(value)) return value.flatMap((item, i) => valuesAt(item, path, `${label}[${i}]`));
  const key = path[0]!;
  const next = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return valuesAt(next, path.slice(1), label === "" ? key : `${label}.${key}`);
}

const only = process.env.BENCH_ONLY?.split(",").map((name) => name.trim());
const chosen = only ? BENCHES.filter((bench) => only.includes(bench.name)) : BENCHES;
const unknown = only?.filter((name) => !BENCHES.some((bench) => bench.name === name)) ?? [];
if (unknown.length > 0) {
  console.error(`bench/summary: no bench named ${unknown.join(", ")}; the benches are ${BENCHES.map((bench) => bench.name).join(", ")}`);
  process.exit(2);
}

const loadBefore = loadavg()[0]!;
const rows: string[][] = [];
let met = 0;
let goals = 0;
let failed = 0;
for (const bench of chosen) {
  console.log(`\n=== bench/${bench.name}.ts`);
  const result = await run(bench.name);
  if ("failed" in result) {
    failed += 1;
    rows.push([bench.name, "(the bench)", result.failed, "", "FAILED"]);
    continue;
  }
  for (const { figure, at, goal } of bench.goals) {
    for (const [label, value] of valuesAt(result.figures, figure.split("."))) {
      goals += 1;
      if (typeof value !== "number") {
        rows.push([bench.name, label, "not printed", `${at} ${goal}`, "MISSED"]);
        continue;
      }
      const ok = at === "<=" ? value <= goal : value >= goal;
      if (ok) met += 1;
      rows.push([bench.name, label, String(value), `${at} ${goal}`, ok ? "met" : "MISSED"]);
    }
  }
  for (const figure of bench.shown ?? []) {
    for (const [label, value] of valuesAt(result.figures, figure.split("."))) rows.push([bench.name, label, String(value ?? "not printed"), "(none)", ""]);
  }
}

const header = ["bench", "figure", "value", "goal", ""];
const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd();
console.log(`\n=== summary: ${met} of ${goals} goals met${failed > 0 ? `, ${failed} bench(es) failed` : ""} (load average ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end)`);
console.log(line(header));
for (const row of rows) console.log(line(row));
if (failed > 0) process.exit(1);
