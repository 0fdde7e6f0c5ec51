// matchRecords, the first claim's reading of the mailbox index: read in chunks
// and compared as bytes, it must find exactly what a plain reading of the lines
// finds — wherever the chunks happen to cut them, whatever damage lies between.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TIME_WIDTH, matchRecords } from "../../src/mailbox/mailbox-index.ts";
import { realFs } from "../../src/storage/fs-ops.ts";
import { tempDir } from "../support/temp-dir.ts";

interface Plain {
  names: string[];
  times: string[];
  inOrder: boolean;
  unmatched: string[];
  bad: number;
}

/** The format as written down (mailbox-index.ts): each record a line led by "\n", crc32 of its body as 8 hex digits, then the body. */
function lineOf(body: string): string {
  return `\n${Bun.hash.crc32(body).toString(16).padStart(8, "0")}${body}`;
}

function body(id: string, time: string, sender = "alice"): string {
  return `${id}.json\t${time}\t${sender}\tresult\t812\t${1000 + id.charCodeAt(0)}\t1764590400123456789`;
}

/** What the records say about `names`, read the plain way: split on newlines, each listed name's lines checked, the first good one kept. */
function plainReading(text: string, names: string[]): Plain {
  const listed = new Set(names);
  const found = new Map<string, string>();
  let bad = 0;
  for (const line of text.split("\n").slice(1)) {
    const name = line.slice(8, 49);
    if (!listed.has(name) || found.has(name)) continue;
    const fields = line.slice(8).split("\t");
    const good = fields.length === 7 && fields[0]!.length === 41 && fields[1]!.length === TIME_WIDTH && /^[0-9a-f]{8}$/.test(line.slice(0, 8)) && Number.parseInt(line.slice(0, 8), 16) === Bun.hash.crc32(line.slice(8));
    if (good) found.set(name, fields[1]!);
    else bad += 1;
  }
  const matched = [...found.keys()];
  const keys = matched.map((name) => `${found.get(name)}${name.slice(0, 36)}`);
  return {
    names: matched,
    times: matched.map((name) => found.get(name)!),
    inOrder: keys.every((key, i) => i === 0 || keys[i - 1]! <= key),
    unmatched: names.filter((name) => !found.has(name)),
    bad,
  };
}

function chunkedReading(path: string, names: string[], chunkBytes?: number): Plain {
  const match = matchRecords(realFs, path, names, chunkBytes)!;
  const matched = [...match.matched].map((i) => names[i]!);
  return {
    names: matched,
    times: matched.map((_, k) => match.times.slice(k * TIME_WIDTH, (k + 1) * TIME_WIDTH)),
    inOrder: match.inOrder,
    unmatched: match.unmatched,
    bad: match.bad,
  };
}

const at = (ms: number) => new Date(Date.UTC(2026, 11, 1, 9, 0, 0, 0) + ms).toISOString();

/** A seeded generator, so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe("matchRecords", () => {
  test("finds what a plain reading of the lines finds, wherever chunks cut them, through damage, duplicates and a torn tail", () => {
    const dir = tempDir("agent-index-match-");
    for (let seed = 1; seed <= 12; seed++) {
      const next = random(seed);
      const ids = Array.from({ length: 300 }, () => crypto.randomUUID());
      const lines: string[] = [];
      // Not a record: what precedes the first newline (a file that does not begin with one).
      if (seed % 3 === 0) lines.push("junk before the first record");
      ids.forEach((id, i) => {
        // Mostly in FIFO order; every so often one sent late, and some sharing a millisecond (then ordered by id).
        const time = at(i % 17 === 5 ? i - 40 : Math.floor(i / 2));
        const roll = next();
        if (roll < 0.05) {
          // Damaged: one character of the time changed, the checksum left as it was.
          const good = lineOf(body(id, time));
          lines.push(good.replace(time, time.replace("2026", "2062")));
        } else if (roll < 0.08) {
          // Too long to be a record (longer than any chunk below), and not naming a listed message.
          lines.push(`\n${"x".repeat(900 + Math.floor(next() * 2000))}`);
          lines.push(lineOf(body(id, time)));
        } else if (roll < 0.11) {
          // Recorded twice: the first good record counts.
          lines.push(lineOf(body(id, time)));
          lines.push(lineOf(body(id, at(99_999), "bob")));
        } else if (roll < 0.14) {
          // A bad checksum digit, then a good record of the same file (as rewriting after a crash leaves).
          lines.push(`\nzz${lineOf(body(id, time)).slice(3)}`);
          lines.push(lineOf(body(id, time)));
        } else if (roll < 0.9) {
          lines.push(lineOf(body(id, time)));
        }
        // else: no record (a file sent by an older version)
      });
      // A crash mid-append: the last record cut short.
      lines.push(lineOf(body(crypto.randomUUID(), at(5))).slice(0, 30 + Math.floor(next() * 60)));
      const text = lines.join("");
      const path = join(dir, `index-${seed}`);
      writeFileSync(path, text, "latin1");
      // Listed: most of the ids (some records describe messages gone from ready/), a name of another shape, and one never recorded.
      const names = [...ids.filter(() => next() < 0.9).map((id) => `${id}.json`), "notes.txt", `${crypto.randomUUID()}.json`];
      const plain = plainReading(text, names);
      expect(plain.names.length).toBeGreaterThan(200);
      expect(plain.bad).toBeGreaterThan(0);
      for (const chunkBytes of [256, 300, 1021, 4096, undefined]) {
        expect({ seed, chunkBytes, ...chunkedReading(path, names, chunkBytes) }).toEqual({ seed, chunkBytes, ...plain });
      }
    }
  });

  test("tells records in FIFO order from records that are not, by time and then by id", () => {
    const dir = tempDir("agent-index-order-");
    const [low, high] = ["00000000-0000-4000-8000-000000000001", "ffffffff-0000-4000-8000-000000000001"];
    const cases: [string, string[], boolean][] = [
      ["time order", [body(high, at(1)), body(low, at(2))], true],
      ["same time, ids in order", [body(low, at(1)), body(high, at(1))], true],
      ["same time, ids out of order", [body(high, at(1)), body(low, at(1))], false],
      ["a later time first", [body(low, at(2)), body(high, at(1))], false],
    ];
    for (const [label, bodies, inOrder] of cases) {
      const path = join(dir, label.replaceAll(" ", "-"));
      writeFileSync(path, bodies.map(lineOf).join(""));
      expect({ label, inOrder: matchRecords(realFs, path, [`${low}.json`, `${high}.json`])!.inOrder }).toEqual({ label, inOrder });
    }
  });

  test("a missing index matches nothing; an unreadable one is reported as such", () => {
    const dir = tempDir("agent-index-missing-");
    const names = [`${crypto.randomUUID()}.json`];
    expect(matchRecords(realFs, join(dir, "index"), names)).toMatchObject({ unmatched: names, bad: 0 });
    // A directory where the index should be: it exists and cannot be read.
    expect(matchRecords(realFs, dir, names)).toBeUndefined();
  });
});
