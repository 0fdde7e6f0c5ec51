import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MissingApiKeyError, UsageError } from "../../src/core/errors.ts";
import { RecordingModelClient, ReplayModelClient } from "../../src/model/cassette.ts";
import { createModelClient } from "../../src/model/factory.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { tempDir } from "../support/temp-dir.ts";

const base = { model: "test-model", timeoutMs: 1_000 };

describe("createModelClient", () => {
  test("a live client needs an API key", () => {
    expect(() => createModelClient(base)).toThrow(MissingApiKeyError);
    expect(() => createModelClient({ ...base, apiKey: "" })).toThrow(MissingApiKeyError);
    expect(createModelClient({ ...base, apiKey: "k" })).toBeInstanceOf(OpenAIModelClient);
  });

  test("the base URL must be http(s)", () => {
    for (const baseUrl of ["localhost:11434/v1", "ftp://example.com/v1", "not a url"]) {
      expect(() => createModelClient({ ...base, apiKey: "k", baseUrl })).toThrow(UsageError);
    }
    expect(() => createModelClient({ ...base, apiKey: "k", baseUrl: "ftp://x/v1" })).toThrow('invalid value "ftp://x/v1" for --base-url');
    expect(createModelClient({ ...base, apiKey: "k", baseUrl: "http://127.0.0.1:11434/v1" })).toBeInstanceOf(
      OpenAIModelClient,
    );
  });

  test("recording wraps the live client; replay needs no key; both together is a usage error", async () => {
    const dir = tempDir();
    const recording = createModelClient({ ...base, apiKey: "k", recordPath: join(dir, "c.jsonl") });
    expect(recording).toBeInstanceOf(RecordingModelClient);
    await recording.close();
    expect(createModelClient({ ...base, replayPath: join(dir, "c.jsonl") })).toBeInstanceOf(ReplayModelClient);
    expect(() =>
      createModelClient({ ...base, apiKey: "k", recordPath: join(dir, "a"), replayPath: join(dir, "b") }),
    ).toThrow(UsageError);
  });

  test("a --record path that cannot be opened fails before any request", () => {
    const path = join(tempDir(), "missing-dir", "c.jsonl");
    expect(() => createModelClient({ ...base, apiKey: "k", recordPath: path })).toThrow(
      `cannot open the cassette ${path} for recording`,
    );
  });
});
