import { type ModelRequest, type ModelResponse, type ModelRetryInfo, addUsage } from "./types.ts";

/**
 * One request, asked once more with the model's whole output allowance when
 * its answer was cut by the output limit in the middle of a tool call (whose
 * arguments are then incomplete). Every adapter ends its `complete` here.
 * `attempt` makes one request (with its retries) under an answer cap.
 */
export async function completeWithinOutputLimit(
  request: ModelRequest,
  limit: number | undefined,
  onRetry: ((info: ModelRetryInfo) => void) | undefined,
  attempt: (maxTokens: number | undefined) => Promise<ModelResponse>,
): Promise<ModelResponse> {
  const response = await attempt(request.maxTokens);
  if (response.finishReason !== "length" || !response.message.toolCalls || request.maxTokens !== undefined) return response;
  if (limit === undefined) return response;
  // Announced like a retry: what streamed of the cut answer is void (stream-json's model_retry).
  (request.onRetry ?? onRetry)?.({
    attempt: 1,
    delayMs: 0,
    reason: `the answer reached the output limit inside a tool call; asking again with a cap of ${limit} tokens`,
  });
  const again = await attempt(limit);
  return { ...again, usage: addUsage(response.usage, again.usage) };
}
