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
    return this.inner.complete(this.#current === this.inner.model ? request : { ...request, model: this.#current });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
