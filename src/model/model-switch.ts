import type { ModelClient, ModelRequest, ModelResponse } from "./types.ts";

/**
 * The runtime's model client with a model that can change between requests
 * (`/model NAME` in a session): every agent's next request names the new model,
 * through the same endpoint, retries and recording.
 */
export class ModelSwitch implements ModelClient {
  #current: string;

  constructor(readonly inner: ModelClient) {
    this.#current = inner.model;
  }

  get model(): string {
    return this.#current;
  }

  use(model: string): void {
    const name = model.trim();
    if (name === "") throw new Error("name a model, e.g. /model gpt-4.1");
    this.#current = name;
  }

  complete(request: ModelRequest): Promise<ModelResponse> {
    // A request naming its own model (a teammate's definition) keeps it.
    if (request.model !== undefined || this.#current === this.inner.model) return this.inner.complete(request);
    return this.inner.complete({ ...request, model: this.#current });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
