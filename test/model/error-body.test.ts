import { describe, expect, test } from "bun:test";
import { classify } from "../../src/model/endpoint-errors.ts";
import { parseErrorText } from "../../src/model/error-body.ts";

// Error bodies of every shape, and what each means for the run.

describe("parseErrorText", () => {
  test.each([
    ['{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}', { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" }],
    ['[{"error":{"code":404,"message":"models/gemini-9 is not found","status":"NOT_FOUND"}}]', { message: "models/gemini-9 is not found", numericCode: 404, status: "NOT_FOUND" }],
    ['{"object":"error","message":"Invalid model: x","type":"invalid_model","param":null,"code":"1500"}', { message: "Invalid model: x", type: "invalid_model", code: "1500" }],
    ['{"detail":[{"loc":["body","messages",0,"role"],"msg":"Input should be \'user\'","type":"literal_error"}]}', { message: "messages.0.role: Input should be 'user'" }],
    ['{"error":"model \\"llama9\\" not found, try pulling it first"}', { message: 'model "llama9" not found, try pulling it first' }],
    ['{"error":{"code":402,"message":"Insufficient credits"}}', { message: "Insufficient credits", numericCode: 402 }],
    ["<html><body><h1>502 Bad Gateway</h1></body></html>", { message: "502 Bad Gateway" }],
    ["", { message: "" }],
  ])("%s", (body, expected) => {
    expect(parseErrorText(body)).toEqual(expected);
  });
});

describe("classify", () => {
  const http = (status: number, body: string) => ({ kind: "http" as const, status, error: parseErrorText(body), headers: undefined, cause: null });
  test.each([
    [http(402, '{"error":{"message":"Insufficient Balance","type":"unknown_error"}}'), "quota"],
    [http(400, '{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}'), "unknown_model"],
    [http(400, '{"error":{"message":"foo/bar is not a valid model ID","code":400}}'), "unknown_model"],
    [http(404, '[{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta","status":"NOT_FOUND"}}]'), "unknown_model"],
    [http(403, '[{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}]'), "auth"],
    [http(400, '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}'), "context_overflow"],
    [http(400, '[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]'), "context_overflow"],
    // A rate limit's message speaks of tokens too: it is waited out, never compacted for.
    [http(429, '{"error":{"message":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 45000. Please reduce the length of the messages.","code":"rate_limit_exceeded"}}'), "rate_limit"],
    [http(503, '[{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]'), "server"],
    [http(404, '{"detail":"Not Found"}'), "not_found"],
    [{ kind: "stream_error" as const, error: parseErrorText('{"error":{"message":"This model\'s maximum context length is 8192 tokens","code":"context_length_exceeded"}}'), cause: null }, "context_overflow"],
  ] as const)("%# → %s", (failure, expected) => {
    expect(classify(failure)).toBe(expected);
  });
});
