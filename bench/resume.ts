/**
 * Resume benchmark: reading a long session's history as a resumed runtime does
 * — the usage records the histories carry that usage.jsonl lacks (read at every
 * runtime's start; the session's usage.jsonl holds them all, as it does but
 * after an OS crash, and its ids are read first, that time counted too), then
 * the Lead's history opened into a HistoryStore (read, checked, applied) —
 * against its floor, a bare `JSON.parse` of every line of the same file (read
 * and split included: a resume cannot do less). Both are timed alternately in
 * this one run, ROUNDS pairs after a warm-up, and each ratio is the median of
 * the pairs' ratios (the machine is shared: a drift in load weighs on both
 * sides of a pair).
 *
 *  - `resumeRatio`: a history of 5 000 turns (test/support/long-history.ts: tool
 *    steps, usage records, turn marks) compacted as the default threshold does
 *    (a snapshot each time the kept messages pass 400 000 characters) — goal <= 2;
 *  - `resumeRatioUncompacted`: the same turns never compacted, so every message
 *    line is one the resume must use — goal <= 2.
 *
 * The last line is one JSON object with the figures.
 *
 *   bun bench/resume.ts   (BENCH_RESUME_TURNS, BENCH_RESUME_ROUNDS)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentName } from "../src/core/agent-name.ts";
import { DEFAULT_COMPACTION } from "../src/runtime/compaction.ts";
import { carriedUsageIn, openFileHistory } from "../src/runtime/file-history.ts";
import { USAGE_RECORD_PREFIX } from "../src/runtime/history-store.ts";
import { ledgerIds, USAGE_FILE } from "../src/usage/usage-ledger.ts";
import { longHistory } from "../test/support/long-history.ts";

const TURNS = Number(process.env.BENCH_RESUME_TURNS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_RESUME_ROUNDS ?? 7);
const LEAD = "lead" as AgentName;

const base = mkdtempSync(join(tmpdir(), "agent-bench-resume-"));

interface Figures {
  ratio: number;
  resumeMs: number;
  floorMs: number;
  lines: number;
  bytes: number;
  messages: number;
}

function measure(name: string, text: string): Figures {
  const stateDir = join(base, name);
  mkdirSync(join(stateDir, "agents"), { recursive: true });
  const path = join(stateDir, "agents", `${LEAD}.jsonl`);
  writeFileSync(path, text);
  const usage = text.split("\n").flatMap((line) => (line.startsWith(USAGE_RECORD_PREFIX) ? [`${JSON.stringify(JSON.parse(line).record)}\n`] : []));
  writeFileSync(join(stateDir, USAGE_FILE), usage.join(""));
  let messages = 0;
  const resume = () => {
    const start = performance.now();
    if (carriedUsageIn(stateDir, ledgerIds(stateDir)).length > 0) throw new Error("bench/resume: usage.jsonl lacks records the history carries");
    const history = openFileHistory(stateDir, LEAD);
    const ms = performance.now() - start;
    messages = history.messages.length;
    history.close();
    return ms;
  };
  let lines = 0;
  const floor = () => {
    const start = performance.now();
    const all = readFileSync(path, "utf8").split("\n");
    all.pop();
    for (const line of all) JSON.parse(line);
    const ms = performance.now() - start;
    lines = all.length;
    return ms;
  };
  // Warm-up: the JIT, the page cache, the schemas built.
  resume();
  floor();
  const ratios: number[] = [];
  const resumes: number[] = [];
  const floors: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // The order flips each round: neither side always runs right after a collection the other caused.
    let resumeMs: number;
    let floorMs: number;
    if (round % 2 === 0) {
      resumeMs = resume();
      floorMs = floor();
    } else {
      floorMs = floor();
      resumeMs = resume();
    }
    resumes.push(resumeMs);
    floors.push(floorMs);
    ratios.push(resumeMs / floorMs);
  }
  return { ratio: round2(median(ratios)), resumeMs: round2(median(resumes)), floorMs: round2(median(floors)), lines, bytes: text.length, messages };
}

try {
  const compacted = measure("compacted", longHistory(TURNS, { compactAt: DEFAULT_COMPACTION.thresholdChars }));
  const whole = measure("uncompacted", longHistory(TURNS));
  for (const [label, figures, name] of [
    ["compacted at the default threshold", compacted, "resumeRatio"],
    ["never compacted", whole, "resumeRatioUncompacted"],
  ] as const) {
    console.log(
      `${TURNS} turns, ${label} (${figures.lines} lines, ${(figures.bytes / 1e6).toFixed(1)} MB, ${figures.messages} messages kept): ` +
        `resume ${figures.resumeMs} ms, bare JSON.parse ${figures.floorMs} ms; ${name} ${figures.ratio} (goal <= 2)`,
    );
  }
  console.log(
    JSON.stringify({
      turns: TURNS,
      rounds: ROUNDS,
      resumeRatio: compacted.ratio,
      resumeMs: compacted.resumeMs,
      floorMs: compacted.floorMs,
      resumeRatioUncompacted: whole.ratio,
      resumeMsUncompacted: whole.resumeMs,
      floorMsUncompacted: whole.floorMs,
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
