import { expect, test } from "bun:test";
import { ResultLine, runSetup, scriptedServers } from "./run-fixture.ts";

// Azure OpenAI's classic deployment URLs on the compiled binary: the path of
// the deployment, the API version in the query (from the base URL, or
// --api-version / config apiVersion), the key in the `api-key` header.

const serve = scriptedServers();

test("a classic deployment URL keeps its query after the path; --api-version sets it; the key goes in api-key", async () => {
  const server = serve([{ text: "Hello." }, { text: "Again." }]);
  const deployment = `${new URL(server.url).origin}/openai/deployments/gpt-4o`;
  const { run } = runSetup();
  const common = ["--model", "gpt-4o", "--profile", "azure", "--output", "json", "--quiet"];
  const env = { OPENAI_API_KEY: "azure-key" };
  const classic = await run(["hello", "--base-url", `${deployment}?api-version=2024-10-21`, ...common], { env });
  expect({ code: classic.code, stderr: classic.stderr }).toEqual({ code: 0, stderr: "" });
  expect(ResultLine.parse(JSON.parse(classic.stdout)).result).toBe("Hello.");
  const versioned = await run(["hello", "--base-url", deployment, "--api-version", "2025-04-01-preview", ...common], { env });
  expect({ code: versioned.code, stderr: versioned.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(server.requests.map((request) => request.url)).toEqual([
    "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
    "/openai/deployments/gpt-4o/chat/completions?api-version=2025-04-01-preview",
  ]);
  for (const request of server.requests) expect(request.headers["api-key"]).toBe("azure-key");
}, 60_000);

test("an api-version that is not one is refused before any request, naming the flag", async () => {
  const server = serve([]);
  const { run } = runSetup();
  const result = await run(["hello", "--base-url", server.url, "--api-version", "2024 10 21", "--quiet"], { env: { OPENAI_API_KEY: "k" } });
  expect(result.code).toBe(2);
  expect(result.stderr).toBe('agent: invalid value "2024 10 21" for --api-version: expected an Azure OpenAI API version such as 2024-10-21 or 2025-04-01-preview\n');
  server.assertDone();
}, 60_000);

test("--provider openai-responses on a classic deployment URL: the query kept, apiVersion from config", async () => {
  const server = serve([
    {
      raw: {
        contentType: "text/event-stream",
        body: `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: { id: "resp_1", status: "completed", output: [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hi.", annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`,
      },
    },
  ]);
  const { run, workspace } = runSetup();
  // A project's config may set it: it names a version, not where requests or the key go.
  await Bun.write(`${workspace}/.agent/config.json`, JSON.stringify({ apiVersion: "2025-04-01-preview" }));
  const result = await run(["hello", "--provider", "openai-responses", "--base-url", `${new URL(server.url).origin}/openai?deployment=gpt-5`, "--model", "gpt-5", "--quiet"], {
    env: { OPENAI_API_KEY: "azure-key" },
  });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(server.requests[0]!.url).toBe("/openai/responses?deployment=gpt-5&api-version=2025-04-01-preview");
}, 60_000);
