import type { ModelClient, ModelRequest, ModelResponse } from "./types.ts";

/**
 * A client whose adapter module is loaded on the first request: the Responses
 * and Anthropic adapters stay out of start-up (and out of every run that does
 * not use them), while the factory stays synchronous.
 */
export class LazyModelClient implements ModelClient {
  readonly model: string;
  readonly #load: () => Promise<ModelClient>;
  #client: Promise<ModelClient> | undefined;

  constructor(model: string, load: () => Promise<ModelClient>) {
    this.model = model;
    this.#load = load;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.#client ??= this.#load();
    return (await this.#client).complete(request);
  }

  async close(): Promise<void> {
    if (this.#client !== undefined) await (await this.#client).close();
  }
}
