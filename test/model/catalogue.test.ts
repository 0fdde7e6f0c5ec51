import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MODEL_CATALOGUE, lookupModel } from "../../src/model/catalogue/catalogue.ts";
import { costUsd } from "../../src/usage/cost.ts";

// The shipped catalogue: every model the docs promise is found under the names
// requests use, config pricing wins, and docs/models.md shows every entry.

describe("the model catalogue", () => {
  test.each([
    ["gpt-4o-mini", 0.15, 128000],
    ["gpt-4o-mini-2024-07-18", 0.15, 128000],
    ["gpt-4o", 2.5, 128000],
    ["gpt-4.1", 2, 1047576],
    ["gpt-4.1-mini", 0.4, 1047576],
    ["o3", 2, 200000],
    ["o4-mini", 1.1, 200000],
    ["gpt-5", 1.25, 400000],
    ["gpt-5-mini", 0.25, 400000],
    ["claude-sonnet-4", 3, 200000],
    ["claude-sonnet-4-20250514", 3, 200000],
    ["claude-sonnet-4-5", 3, 200000],
    ["anthropic/claude-sonnet-4.5", 3, 200000],
    ["claude-opus-4-1-20250805", 15, 200000],
    ["claude-haiku-4-5", 1, 200000],
    ["deepseek-chat", 0.28, 128000],
    ["deepseek-reasoner", 0.28, 128000],
    ["gemini-2.5-pro", 1.25, 1048576],
    ["models/gemini-2.5-flash", 0.3, 1048576],
    ["mistral-large-latest", 2, 131072],
    ["llama-3.3-70b-versatile", 0.59, 131072],
    ["openai/gpt-4o-mini", 0.15, 128000],
  ] as const)("%s", (id, input, window) => {
    const info = lookupModel(id);
    expect(info?.price.input_per_mtok).toBe(input);
    expect(info?.contextWindow).toBe(window);
  });

  test("a more specific id is not taken by a shorter one's pattern", () => {
    expect(lookupModel("gpt-4o-mini")?.price.output_per_mtok).toBe(0.6);
    expect(lookupModel("gpt-4.1-nano")?.price.input_per_mtok).toBe(0.1);
    expect(lookupModel("gemini-2.5-flash-lite")?.price.input_per_mtok).toBe(0.1);
    expect(lookupModel("claude-opus-4-5")?.price.input_per_mtok).toBe(5);
  });

  test("an unknown model, or a free variant, has no entry", () => {
    expect(lookupModel("my-local-model")).toBeUndefined();
    expect(lookupModel("deepseek/deepseek-chat:free")).toBeUndefined();
  });

  test("config pricing wins for the model it names; the catalogue prices the rest", () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedInputTokens: 500_000 };
    expect(costUsd({}, "gpt-4o-mini", usage)).toBeCloseTo(0.5 * 0.15 + 0.5 * 0.075 + 0.6, 9);
    expect(costUsd({ "gpt-4o-mini": { input_per_mtok: 1, output_per_mtok: 2 } }, "gpt-4o-mini", usage)).toBe(3);
    expect(costUsd({}, "my-local-model", usage)).toBeUndefined();
  });

  test("every entry is well formed and shown in docs/models.md", () => {
    const docs = readFileSync(join(import.meta.dir, "..", "..", "docs", "models.md"), "utf8");
    for (const info of MODEL_CATALOGUE.models) {
      expect(() => new RegExp(info.match)).not.toThrow();
      expect(info.contextWindow).toBeGreaterThan(0);
      expect(info.maxOutputTokens).toBeGreaterThan(0);
      expect(info.price.output_per_mtok).toBeGreaterThanOrEqual(0);
      const row = `| \`${info.match.replaceAll("|", "\\|")}\` | ${info.provider} | ${info.contextWindow} | ${info.maxOutputTokens} |`;
      expect({ row, shown: docs.includes(row) }).toEqual({ row, shown: true });
    }
    expect(docs.includes("as known to us in November 2025") && MODEL_CATALOGUE.checked === "2025-11").toBe(true);
  });
});

test("loading the catalogue compiles none of its patterns: every command's start loads it, the first lookup compiles them", () => {
  // In a child: this file has looked models up already.
  const script = `
    let compiled = 0;
    globalThis.RegExp = new Proxy(RegExp, { construct(target, args, newTarget) { compiled++; return Reflect.construct(target, args, newTarget); } });
    const { lookupModel } = await import(${JSON.stringify(join(import.meta.dir, "../../src/model/catalogue/catalogue.ts"))});
    const atLoad = compiled;
    lookupModel("gpt-4o-mini");
    console.log(JSON.stringify({ atLoad, afterLookup: compiled }));`;
  const child = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe" });
  expect(child.stderr.toString()).toBe("");
  const { atLoad, afterLookup } = JSON.parse(child.stdout.toString()) as { atLoad: number; afterLookup: number };
  expect(atLoad).toBe(0);
  expect(afterLookup).toBe(MODEL_CATALOGUE.models.length);
});
