import type { ModelClient, ModelRequest, ModelResponse } from "./types.ts";

/**
 * A view of a shared client whose every request names `model` (a teammate
 * defined with its own model): same endpoint, retries, metering and recording.
 * Closing the view leaves the shared client open.
 */
export function withModel(client: ModelClient, model: string): ModelClient {
  return {
    model,
    complete: (request: ModelRequest): Promise<ModelResponse> => client.complete({ ...request, model }),
    close: async () => {},
  };
}
