import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MODEL_CATALOGUE, THINKING_FORMS, lookupModel, thinkingFormOf } from "../../src/model/catalogue/catalogue.ts";
import { costUsd } from "../../src/usage/cost.ts";
import { Pricing } from "../../src/usage/pricing.ts";

// The shipped catalogue: every model the docs promise is found under the names
// requests use, config pricing wins, a long-context tier prices the whole
// request above its threshold, every entry says where its figures come from,
// and docs/models.md shows every entry.

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
    ["gpt-5.4", 2.5, 1050000],
    ["gpt-5.4-2026-03-05", 2.5, 1050000],
    ["openai/gpt-5.4", 2.5, 1050000],
    ["claude-sonnet-4", 3, 200000],
    ["claude-sonnet-4-20250514", 3, 200000],
    ["claude-sonnet-4-5", 3, 200000],
    ["anthropic/claude-sonnet-4.5", 3, 200000],
    ["claude-opus-4-1-20250805", 15, 200000],
    ["claude-haiku-4-5", 1, 200000],
    ["deepseek-v4-flash", 0.14, 1000000],
    ["deepseek-v4-pro", 0.435, 1000000],
    ["deepseek-chat", 0.14, 1000000],
    ["deepseek-reasoner", 0.14, 1000000],
    ["gemini-3-flash-preview", 0.5, 1048576],
    ["gemini-2.5-pro", 1.25, 1048576],
    ["models/gemini-2.5-flash", 0.3, 1048576],
    ["mistral-large-latest", 2, 131072],
    ["llama-3.3-70b-versatile", 0.59, 131072],
    ["grok-4-1-fast-reasoning", 0.2, 2000000],
    ["grok-4.20-0309-reasoning", 2, 2000000],
    ["openai/gpt-4o-mini", 0.15, 128000],
  ] as const)("%s", (id, input, window) => {
    const info = lookupModel(id);
    expect(info?.price?.input_per_mtok).toBe(input);
    expect(info?.contextWindow).toBe(window);
  });

  test.each([
    ["gpt-5.4-mini", 400000, 128000, "effort"],
    ["gpt-5.3-codex", 400000, 128000, "effort"],
    ["gpt-5.2", 400000, 128000, "effort"],
    ["gemini-3.1-pro-preview", 1048576, 65536, "level"],
  ] as const)("%s: its limits and thinking form known, its price not (no official figure found): cost unknown", (id, window, output, form) => {
    const info = lookupModel(id);
    expect({ window: info?.contextWindow, output: info?.maxOutputTokens, form: info && thinkingFormOf(info), price: info?.price }).toEqual({ window, output, form, price: undefined });
    expect(costUsd({}, id, { inputTokens: 1000, outputTokens: 10 })).toBeUndefined();
  });

  test("models their providers have shut down are not in the catalogue; announced shutdowns are marked", () => {
    // OpenAI shut gpt-5-codex down on 2026-07-23 and chatgpt-4o-latest on 2026-02-17;
    // Google gemini-2.0-flash on 2026-06-01, gemini-3-pro-preview on 2026-03-09, the 2.5 previews on 2025-12-02.
    for (const id of ["gpt-5-codex", "chatgpt-4o-latest", "gemini-2.0-flash", "gemini-3-pro-preview", "gemini-2.5-pro-preview-06-05"]) {
      expect({ id, info: lookupModel(id) }).toEqual({ id, info: undefined });
    }
    expect(lookupModel("gemini-2.5-pro")?.deprecated).toMatchObject({ shutdown: "2026-06-17", replacement: "gemini-3.1-pro-preview" });
    expect(lookupModel("deepseek-chat")?.deprecated).toMatchObject({ replacement: "deepseek-v4-flash" });
  });

  test("a more specific id is not taken by a shorter one's pattern", () => {
    expect(lookupModel("gpt-4o-mini")?.price?.output_per_mtok).toBe(0.6);
    expect(lookupModel("gpt-4.1-nano")?.price?.input_per_mtok).toBe(0.1);
    expect(lookupModel("gemini-2.5-flash-lite")?.price?.input_per_mtok).toBe(0.1);
    expect(lookupModel("claude-opus-4-5")?.price?.input_per_mtok).toBe(5);
    expect(lookupModel("gpt-5.4-mini")?.maxOutputTokens).toBe(128000);
    expect(lookupModel("gpt-5.4")?.contextWindow).toBe(1050000);
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

  test("a long-context tier prices the whole request above its threshold, cached and output tokens too; at the threshold the base rates", () => {
    // GPT-5.4: above 272K input tokens, 2x input and 1.5x output for the whole request.
    const at = { inputTokens: 272_000, outputTokens: 1000, cachedInputTokens: 72_000 };
    expect(costUsd({}, "gpt-5.4", at)).toBeCloseTo((200_000 * 2.5 + 72_000 * 0.25 + 1000 * 15) / 1e6, 9);
    const above = { inputTokens: 272_001, outputTokens: 1000, cachedInputTokens: 72_000 };
    expect(costUsd({}, "gpt-5.4", above)).toBeCloseTo((200_001 * 5 + 72_000 * 0.5 + 1000 * 22.5) / 1e6, 9);
    // Claude Haiku 5.5 above 100 000: $0.50 / $2.50; its cache reads keep the base rate (no tier rate given).
    expect(costUsd({}, "claude-haiku-5-5", { inputTokens: 150_000, outputTokens: 1000, cachedInputTokens: 50_000 })).toBeCloseTo((100_000 * 0.5 + 50_000 * 0.01 + 1000 * 2.5) / 1e6, 9);
    // Config pricing takes the same tier; a rate it leaves out keeps the base one.
    const pricing = Pricing.parse({ m: { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.1, long_context: { above_input_tokens: 100, input_per_mtok: 3, output_per_mtok: 4 } } });
    expect(Pricing.safeParse({ m: { input_per_mtok: 1, output_per_mtok: 2, long_context: { above_input_tokens: 0, input_per_mtok: 3, output_per_mtok: 4 } } }).success).toBe(false);
    expect(costUsd(pricing, "m", { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedInputTokens: 500_000 })).toBeCloseTo(0.5 * 3 + 0.5 * 0.1 + 4, 9);
    expect(costUsd(pricing, "m", { inputTokens: 100, outputTokens: 0 })).toBeCloseTo(100 / 1e6, 12);
  });

  test("every entry is well formed, names its source and date, has no negative price, a thinking form the adapters know, and is shown in docs/models.md", () => {
    const docs = readFileSync(join(import.meta.dir, "..", "..", "docs", "models.md"), "utf8");
    for (const info of MODEL_CATALOGUE.models) {
      const where = { match: info.match };
      expect(() => new RegExp(info.match)).not.toThrow();
      expect(info.contextWindow).toBeGreaterThan(0);
      expect(info.maxOutputTokens).toBeGreaterThan(0);
      expect(info.maxOutputTokens).toBeLessThanOrEqual(info.contextWindow);
      expect({ ...where, source: /^https:\/\/[^\s]+$/.test(info.source), checked: /^20\d\d-\d\d(-\d\d)?$/.test(info.checked) }).toEqual({ ...where, source: true, checked: true });
      const { long_context: long = {}, ...base } = info.price ?? {};
      const rates = [...Object.values(base), ...Object.values(long)];
      expect({ ...where, negative: rates.filter((rate) => typeof rate !== "number" || rate < 0) }).toEqual({ ...where, negative: [] });
      if (info.price?.long_context) expect(info.price.long_context.above_input_tokens).toBeLessThan(info.contextWindow);
      // Anthropic's adapter sends its two forms; the other adapters send none and the model thinks as it defaults.
      const form = thinkingFormOf(info);
      if (!info.reasoning) expect({ ...where, thinking: info.thinking }).toEqual({ ...where, thinking: undefined });
      else expect({ ...where, form, sent: THINKING_FORMS[form!]?.sent }).toEqual({ ...where, form: form!, sent: info.provider === "anthropic" });
      if (info.deprecated) expect({ ...where, shutdown: /^20\d\d-\d\d-\d\d$/.test(info.deprecated.shutdown), source: info.deprecated.source.startsWith("https://") }).toEqual({ ...where, shutdown: true, source: true });
      const row = `| \`${info.match.replaceAll("|", "\\|")}\` | ${info.provider} | ${info.contextWindow} | ${info.maxOutputTokens} |`;
      expect({ row, shown: docs.includes(row) }).toEqual({ row, shown: true });
      expect({ ...where, sourced: docs.includes(info.source) }).toEqual({ ...where, sourced: true });
    }
    expect(MODEL_CATALOGUE.checked).toBe("2026-12");
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
